// Example: an agent asks before it spends. It builds a SpendIntent with the service's own rules,
// checks its locally computed intentHash against the one the service stores, then preflights it,
// paying the $0.05 call over x402 with its own wallet (the spend controls allow only the service's
// asset, at most `capAtomic` per call).
//   SPEND_CONTROL_URL=http://127.0.0.1:4000 AGENT_KEY=0x… POLICY_ID=… POLICY_HASH=0x… \
//   POLICY_TOKEN=0x… node dist/sdk/examples/preflight.js
import { privateKeyToAccount } from 'viem/accounts';
import { buildSpendIntent, SpendControlAgent, type BuiltSpendIntent } from '@spend-control/agent';

export interface ExamplePolicy {
  readonly policyId: string;
  readonly policyHash: string;
  /** The policy's asset: the intent pays in it. */
  readonly network: string;
  readonly token: string;
}

export interface PreflightExampleOptions {
  readonly baseUrl: string;
  readonly agentKey: `0x${string}`;
  readonly policy: ExamplePolicy;
  /** Default 0.05 USD₮0 (50000 atomic), under the example policy's 1.00 escalation threshold. */
  readonly amountAtomic?: bigint;
  /** Most one x402 payment may take; default 0.10 USD₮0. */
  readonly capAtomic?: bigint;
  readonly fetch?: typeof fetch;
}

export function exampleIntent(policy: ExamplePolicy, amountAtomic: bigint): BuiltSpendIntent {
  return buildSpendIntent({
    policyId: policy.policyId,
    policyHash: policy.policyHash,
    agentId: 'research-bot-1',
    category: 'market-data',
    provider: 'api.vendor.example',
    capability: 'quotes.read',
    item: { description: 'EURUSD 1m candles, 24h', params: { pair: 'EURUSD' } },
    recipient: '0x2222222222222222222222222222222222222222',
    network: policy.network,
    token: policy.token,
    amountAtomic,
    deadline: new Date(Date.now() + 3_600_000),
    endpoint: 'https://api.vendor.example/candles?pair=EURUSD',
  });
}

export function exampleAgent(options: PreflightExampleOptions): SpendControlAgent {
  return new SpendControlAgent({
    baseUrl: options.baseUrl,
    payer: {
      signer: privateKeyToAccount(options.agentKey),
      maxAmountPerPaymentAtomic: options.capAtomic ?? 100_000n,
    },
    pollIntervalMs: 100,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

export async function preflightExample(options: PreflightExampleOptions) {
  const agent = exampleAgent(options);
  const intent = exampleIntent(options.policy, options.amountAtomic ?? 50_000n);
  const stored = await agent.createSpendIntent(options.policy.policyId, intent);
  if (stored.intentHash !== intent.intentHash)
    throw new Error(`intentHash differs: local ${intent.intentHash}, service ${stored.intentHash}`);
  const decision = await agent.preflight(options.policy.policyId, intent);
  return { intent, stored, decision };
}

/** The options of a run from the command line, read from the environment the header names. */
export function optionsFromEnvironment(): PreflightExampleOptions {
  const env = (name: string) => process.env[name] ?? `missing ${name}`;
  return {
    baseUrl: process.env.SPEND_CONTROL_URL ?? 'http://127.0.0.1:4000',
    agentKey: env('AGENT_KEY') as `0x${string}`,
    policy: {
      policyId: env('POLICY_ID'),
      policyHash: env('POLICY_HASH'),
      network: process.env.POLICY_NETWORK ?? 'eip155:196',
      token: env('POLICY_TOKEN'),
    },
  };
}

if (require.main === module) {
  preflightExample(optionsFromEnvironment()).then(
    ({ decision }) => console.log(decision.decision, decision.intentHash, decision.receiptId),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
