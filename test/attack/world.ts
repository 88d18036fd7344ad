// The stacks a fuzz campaign attacks and what it may name on them. Two real stacks on one devnet:
// "production" takes x402 payment on priced routes (what an unpaying attacker reaches), and
// "paid-through" serves priced routes without payment, so the fuzz also reaches the code a paying
// attacker reaches behind the paywall. Both know the funding chain's PolicyRegistry.
import { randomBytes } from 'node:crypto';
import { keccak256, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { freshWireIntent, policyDocument } from '../../core/test-support/spend-fixtures';
import { formatIsoSeconds } from '../../core/validation/timestamp';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { KEY_ROLES } from '../../platform/chain/keys';
import { buildRoutes } from '../../gateway/rest/routes';
import { signIn } from '../support/siwe';
import {
  postJson,
  startTestStack,
  testServiceInfo,
  type TestStack,
  type TestStackOptions,
} from '../support/stack';
import { EDGE_TARGETS, restTargets, type AttackTarget } from './surface';
import type { FuzzWorld } from './values';
import type { VerdictContext } from './verdict';

export interface AttackedStack {
  readonly name: 'production' | 'paid-through';
  readonly stack: TestStack;
  readonly world: FuzzWorld;
  readonly targets: readonly AttackTarget[];
  readonly verdict: VerdictContext;
}

export interface AttackStacks {
  readonly stacks: readonly AttackedStack[];
  stop(): Promise<void>;
}

/**
 * Options every attacked stack shares (the fuzz's and the authorization matrix's). Rate limits,
 * once configurable, belong here, set generously: the campaign sends thousands of requests from one
 * address and must measure the routes, not the limiter; a 429 with the error body and Retry-After
 * is an accepted answer either way.
 */
export function attackStackOptions(
  devnet: DevnetChains,
  channels: ChannelSecrets = newChannelSecrets(),
): TestStackOptions {
  const funding = devnet.info.chains.funding;
  return {
    chains: {
      funding: {
        chainId: funding.chainId,
        rpcUrl: funding.rpcUrl,
        policyRegistry: devnet.info.contracts.policyRegistry,
      },
    },
    channelInbound: {
      telegram: { webhookSecret: channels.telegramSecret },
      slack: { signingSecret: channels.slackSigningSecret },
    },
  };
}

export interface ChannelSecrets {
  readonly telegramSecret: string;
  readonly slackSigningSecret: string;
}

export function newChannelSecrets(): ChannelSecrets {
  return {
    telegramSecret: randomBytes(24).toString('hex'),
    slackSigningSecret: randomBytes(24).toString('hex'),
  };
}

/** A key derived from the seed, so a seed replays the same owner, policy and intents. */
function seededAccount(seed: number, role: string) {
  return privateKeyToAccount(keccak256(toHex(`attack:${seed}:${role}`)));
}

async function preflightFree(
  stack: TestStack,
  policyId: string,
  intent: Record<string, unknown>,
): Promise<any> {
  const answer = await postJson(stack.url, '/preflight_payment', { policyId, intent });
  if (answer.status !== 200)
    throw new Error(`fixture preflight answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** The fixtures a campaign names on `stack` (a policy, an intent, sessions); paidThrough also preflights. */
export async function worldOn(
  stack: TestStack,
  seed: number,
  paidThrough: boolean,
  channels: ChannelSecrets,
): Promise<FuzzWorld> {
  const owner = seededAccount(seed, 'owner');
  const document = policyDocument({ owner: owner.address.toLowerCase(), name: 'attack target' });
  const created = await postJson(
    stack.url,
    '/create_spend_policy',
    { policy: document },
    stack.adminToken,
  );
  if (created.status !== 201)
    throw new Error(`fixture policy refused: ${JSON.stringify(created.body)}`);
  const policy = {
    policyId: created.body.policyId as string,
    policyHash: created.body.policyHash as string,
  };
  const intent = freshWireIntent(policy, Date.now(), {
    deadline: formatIsoSeconds(Math.floor(Date.now() / 1000) + 12 * 3600),
  });
  let intentHash: string | null = null;
  let receiptId: string | null = null;
  let pollRef: string | null = null;
  if (paidThrough) {
    const approved = await preflightFree(stack, policy.policyId, intent);
    intentHash = approved.intentHash;
    receiptId = approved.receiptId;
    const escalating = freshWireIntent(policy, Date.now(), { amount: '1500000' });
    pollRef = (await preflightFree(stack, policy.policyId, escalating)).escalation?.pollRef ?? null;
  }
  return {
    adminToken: stack.adminToken,
    ownerToken: await signIn(stack.url, owner),
    consumerToken: await signIn(stack.url, owner, policy.policyId),
    ownerAddress: owner.address.toLowerCase(),
    policyId: policy.policyId,
    policyHash: policy.policyHash,
    intent,
    policyDocument: document,
    intentHash,
    receiptId,
    pollRef,
    ...channels,
  };
}

async function targetsOf(stack: TestStack): Promise<AttackTarget[]> {
  const openapi = (await (await fetch(`${stack.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  return [...restTargets(openapi, buildRoutes()), ...EDGE_TARGETS];
}

function secretsOf(stack: TestStack, devnet: DevnetChains, channels: ChannelSecrets): string[] {
  return [
    stack.adminToken,
    stack.db.url,
    channels.telegramSecret,
    channels.slackSigningSecret,
    ...KEY_ROLES.map((role) => devnet.keys[role].exportPrivateKey().slice(2)),
  ];
}

/** Starts the devnet and both stacks with their fixtures; `seed` fixes the owner and its policy. */
export async function startAttackStacks(seed: number): Promise<AttackStacks> {
  const devnet = await startDevnetChains({ dataDir: null });
  const channels = newChannelSecrets();
  const started: TestStack[] = [];
  try {
    const stacks: AttackedStack[] = [];
    for (const name of ['production', 'paid-through'] as const) {
      const paywalled = name === 'production';
      const stack = await startTestStack({
        ...attackStackOptions(devnet, channels),
        ...(paywalled ? { x402: { devnet } } : {}),
      });
      started.push(stack);
      stacks.push({
        name,
        stack,
        world: await worldOn(stack, seed, !paywalled, channels),
        targets: await targetsOf(stack),
        verdict: {
          secrets: secretsOf(stack, devnet, channels),
          docsBaseUrl: testServiceInfo().docsBaseUrl,
        },
      });
    }
    return {
      stacks,
      async stop() {
        for (const stack of started) await stack.stop();
        await devnet.stop();
      },
    };
  } catch (error) {
    for (const stack of started) await stack.stop();
    await devnet.stop();
    throw error;
  }
}
