// `spend-control demo` (`npm run demo`): the whole story of a purchase on the embedded default, step
// by step, as a user would drive it. It starts the service in this process on a fresh data folder
// (embedded PostgreSQL unless DATABASE_URL is set, the two anvil chains, the devnet merchant and
// RDAP registry), then: an owner's policy is created, the owner's wallet gets devnet USD₮0 and
// signs in as the policy's consumer, buys `domains.check` for a registered devnet name, funds it
// with the official x402 client on eip155:196, the service pays the merchant on eip155:8453, the
// registry confirms the merchant's answer, and the public receipt is printed with its two payment
// legs, followed by the ledger's trial balance; last, the receipt is anchored on chain by the
// service's anchoring worker and checked as anyone would check it (`spend-control receipts verify`
// against the chain's RPC). Any failed step stops the demo with exit code 1.
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { freePort } from '../platform/freePort';
import os from 'node:os';
import path from 'node:path';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { signIn } from '../devnet/agents/signIn';
import { readDevnetFile, type DevnetInfo } from '../devnet/devnetFile';
import { faucet } from '../devnet/faucet';
import { DEVNET_REGISTERED_DOMAINS } from '../devnet/merchants/domains/names';
import { receiptsMain } from './receiptsVerify';
import { DEVNET_WRITER_DELAY_SECONDS } from '../platform/chain/receiptAnchor';
import { start } from './start';
import type { Out } from './startup';

/** How long the purchase may take to reach COMPLETED once executed. */
const COMPLETION_TIMEOUT_MS = 60_000;
/** How long the receipt may take to be ANCHORED (a batch closes within ANCHOR_BATCH_SECONDS, 2 s). */
const ANCHOR_TIMEOUT_MS = 60_000;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

class DemoStepError extends Error {}

interface DemoContext {
  readonly url: string;
  readonly adminToken: string;
  readonly devnet: DevnetInfo;
  readonly dataDir: string;
  readonly wallet: PrivateKeyAccount;
  readonly out: Out;
}

async function call(
  url: string,
  init: { method?: string; token?: string; body?: unknown },
  expected: number,
  what: string,
): Promise<Json> {
  const response = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const body = (await response.json().catch(() => ({}))) as Json;
  if (response.status !== expected)
    throw new DemoStepError(`${what} answered ${response.status}: ${JSON.stringify(body)}`);
  return body;
}

/** The policy the owner keeps: the devnet USD₮0, `domains` allowed, nothing escalates below 1.00. */
async function createPolicy(ctx: DemoContext): Promise<string> {
  const funding = ctx.devnet.chains.funding;
  const created = await call(
    `${ctx.url}/create_spend_policy`,
    {
      token: ctx.adminToken,
      body: {
        policy: {
          owner: ctx.wallet.address.toLowerCase(),
          name: 'demo: domain checks',
          asset: {
            network: funding.caip2,
            token: funding.token.address.toLowerCase(),
            symbol: funding.token.symbol,
            decimals: funding.token.decimals,
          },
          dailyBudget: '5.00',
          perCallCap: '1.00',
          escalateAbove: '1.00',
          categories: { allow: ['domains'], deny: [] },
        },
      },
    },
    201,
    'create_spend_policy',
  );
  return created.policyId as string;
}

/** The official client (@x402/fetch with @x402/evm's exact scheme) of the wallet, allowed the devnet USD₮0. */
function officialFetch(ctx: DemoContext): typeof fetch {
  const funding = ctx.devnet.chains.funding;
  const client = new x402Client().register(funding.caip2, new ExactEvmScheme(ctx.wallet));
  client.setSpendControls({
    allowedAssets: [
      {
        network: funding.caip2,
        asset: funding.token.address.toLowerCase(),
        maxAmountPerPayment: '1000000',
      },
    ],
  });
  return wrapFetchWithPayment(fetch, client) as typeof fetch;
}

async function untilCompleted(ctx: DemoContext, session: string, intentId: string): Promise<Json> {
  const deadline = Date.now() + COMPLETION_TIMEOUT_MS;
  let last = '';
  for (;;) {
    const { intent } = await call(
      `${ctx.url}/consumer/intents/${intentId}`,
      { token: session },
      200,
      'GET /consumer/intents/:id',
    );
    if (intent.state !== last) ctx.out(`        state ${(last = intent.state as string)}`);
    if (intent.state === 'COMPLETED') return intent as Json;
    if (['MANUAL_REVIEW', 'REFUNDED', 'BLOCKED', 'EXPIRED', 'CANCELLED'].includes(intent.state))
      throw new DemoStepError(`the purchase ended ${intent.state}: ${intent.stateReason}`);
    if (Date.now() > deadline)
      throw new DemoStepError(`the purchase did not complete within ${COMPLETION_TIMEOUT_MS} ms`);
    // Twice a second stays well inside the free routes' rate limit (60/min, burst 30).
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function printLeg(out: Out, name: string, leg: Json | null): void {
  if (leg === null) throw new DemoStepError(`the receipt has no ${name} leg`);
  out(
    `        ${name.padEnd(10)} ${leg.amount} atomic on ${leg.chain}  ${leg.sender} → ${leg.recipient}`,
  );
  out(`                   tx ${leg.txHash}`);
}

/** The purchase itself, steps 2 to 9 (step 10 checks its anchoring). */
async function purchase(ctx: DemoContext, step: (text: string) => void): Promise<void> {
  step('the owner creates a spend policy (admin route, devnet USD₮0, domains allowed)');
  const policyId = await createPolicy(ctx);
  ctx.out(`        policy ${policyId}`);
  step(`the owner's wallet ${ctx.wallet.address} gets devnet USD₮0 and gas from the faucet`);
  await faucet({ dataDir: ctx.dataDir, address: ctx.wallet.address, amount: '10.00' });
  step('the wallet signs in with SIWE as the policy’s consumer');
  const session = await signIn(ctx.url, ctx.wallet, policyId);
  const domain = DEVNET_REGISTERED_DOMAINS[0]!;
  step(`the consumer asks for domains.check of ${domain}: the merchant's own 402 is the quote`);
  const created = await call(
    `${ctx.url}/consumer/intents`,
    { token: session, body: { capability: 'domains.check', params: { domain } } },
    201,
    'POST /consumer/intents',
  );
  const intentId = created.intent.intentId as string;
  const quote = created.quote as Json;
  ctx.out(
    `        ${intentId}: cost ${quote.providerCost.amount} + fee ${quote.fee} + spread ${quote.spread} = ${quote.funding.amount}; decision ${created.decision.decision}, next ${created.nextAction}`,
  );
  if (created.nextAction !== 'FUND') throw new DemoStepError('the policy did not approve');
  step('the consumer funds it with the official x402 client (EIP-3009 on eip155:196)');
  const funded = await officialFetch(ctx)(`${ctx.url}/consumer/intents/${intentId}/fund`, {
    method: 'POST',
    headers: { authorization: `Bearer ${session}` },
  });
  const fundedBody = (await funded.json()) as Json;
  if (funded.status !== 200)
    throw new DemoStepError(`fund answered ${funded.status}: ${JSON.stringify(fundedBody)}`);
  ctx.out(`        ${fundedBody.intent.state}, tx ${fundedBody.funding.txHash}`);
  step('execute: the service pays the merchant on eip155:8453; the registry checks the answer');
  await call(
    `${ctx.url}/consumer/intents/${intentId}/execute`,
    { token: session, body: {} },
    202,
    'execute',
  );
  await untilCompleted(ctx, session, intentId);
  step('the public receipt (no credential needed)');
  const receipt = await call(
    `${ctx.url}/consumer/receipt/${intentId}`,
    {},
    200,
    'GET /consumer/receipt/:id',
  );
  printReceipt(ctx.out, receipt);
  step('the ledger’s trial balance, per asset');
  await printTrialBalance(ctx);
  step('the receipt anchored on chain, checked without trusting the service (receipts verify)');
  await untilAnchored(ctx, intentId);
  const code = await receiptsMain(
    [
      'verify',
      intentId,
      '--rpc',
      ctx.devnet.chains.funding.rpcUrl,
      '--service',
      ctx.url,
      '--contract',
      ctx.devnet.contracts.receiptAnchor!,
      // The devnet's contract waits seconds, not the three days of a real deployment.
      '--writer-delay',
      String(DEVNET_WRITER_DELAY_SECONDS),
    ],
    (line) => ctx.out(`        ${line}`),
  );
  if (code !== 0) throw new DemoStepError('the receipt’s anchor proof did not verify');
}

async function untilAnchored(ctx: DemoContext, intentId: string): Promise<void> {
  const deadline = Date.now() + ANCHOR_TIMEOUT_MS;
  for (;;) {
    const receipt = await call(
      `${ctx.url}/consumer/receipt/${intentId}`,
      {},
      200,
      'GET /consumer/receipt/:id',
    );
    const anchor = receipt.anchor as Json | undefined;
    if (anchor?.state === 'ANCHORED') {
      ctx.out(`        ANCHORED in block ${anchor.blockNumber}, tx ${anchor.txHash}`);
      return;
    }
    if (anchor?.state !== 'PENDING')
      throw new DemoStepError(`the receipt's anchor is ${JSON.stringify(anchor ?? null)}`);
    if (Date.now() > deadline)
      throw new DemoStepError(`the receipt was not anchored within ${ANCHOR_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function printReceipt(out: Out, receipt: Json): void {
  out(`        ${receipt.intentId} ${receipt.capability} ${receipt.state}`);
  out(`        merchant said   ${JSON.stringify(receipt.providerAttested?.fields ?? null)}`);
  out(`        service found   ${JSON.stringify(receipt.serviceVerified ?? null)}`);
  printLeg(out, 'funding', receipt.paymentLegs?.funding ?? null);
  printLeg(out, 'settlement', receipt.paymentLegs?.settlement ?? null);
  out(`        fee ${receipt.fee}, spread ${receipt.spread}, anchor ${receipt.anchor?.state}`);
  out(`        integrity.digest ${receipt.integrity?.digest}`);
}

async function printTrialBalance(ctx: DemoContext): Promise<void> {
  const answer = await call(
    `${ctx.url}/graphql`,
    {
      token: ctx.adminToken,
      body: { query: '{ trialBalance { asset { id } netAtomic balanced } }' },
    },
    200,
    'trialBalance',
  );
  const lines = (answer.data?.trialBalance ?? []) as Json[];
  if (lines.length === 0) throw new DemoStepError('the trial balance is empty');
  for (const line of lines) {
    ctx.out(
      `        ${String(line.asset.id).padEnd(60)} net ${line.netAtomic} ${line.balanced ? 'balanced' : 'NOT BALANCED'}`,
    );
    if (!line.balanced || line.netAtomic !== '0')
      throw new DemoStepError('the books do not balance');
  }
}

/** Runs the demo; resolves to the exit code. */
export async function runDemo(
  env: NodeJS.ProcessEnv = process.env,
  out: Out = (line) => process.stdout.write(`${line}\n`),
): Promise<number> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'spend-control-demo-'));
  // The embedded PostgreSQL runs as its own OS user when we are root, and must reach its folder.
  chmodSync(dataDir, 0o755);
  let n = 0;
  const step = (text: string) => out(`step ${(n += 1)}/10  ${text}`);
  let stop: (() => Promise<void>) | null = null;
  try {
    step(`start the service on the embedded default (data in ${dataDir})`);
    const port = await freePort();
    const demoEnv: NodeJS.ProcessEnv = {
      ...env,
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: env.LOG_LEVEL ?? 'warn',
    };
    for (const name of [
      'FUNDING_RPC_URL',
      'SETTLEMENT_RPC_URL',
      'PROVIDER_DOMAINS_URL',
      'RDAP_BOOTSTRAP_URL',
      'NODE_ENV',
    ])
      delete demoEnv[name];
    const running = await start({ role: 'all', transport: 'in-process' }, demoEnv, () => undefined);
    stop = running.stop;
    const ctx: DemoContext = {
      url: running.gatewayUrl ?? `http://127.0.0.1:${port}`,
      adminToken: readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim(),
      devnet: readDevnetFile(dataDir),
      dataDir,
      wallet: privateKeyToAccount(generatePrivateKey()),
      out,
    };
    out(`        gateway ${ctx.url}`);
    await purchase(ctx, step);
    out('demo: every step passed');
    return 0;
  } catch (error) {
    out(`demo failed at step ${n}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await stop?.().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
