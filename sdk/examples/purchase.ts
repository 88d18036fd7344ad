// Example: buy `domains.check` through the consumer path. The agent signs in as the policy's
// consumer (SIWE), then the SDK creates the intent (the merchant's quote, the policy's decision),
// funds exactly the quoted amount over x402, executes it, waits for COMPLETED and checks the public
// receipt's digest against its body.
//   SPEND_CONTROL_URL=http://127.0.0.1:4000 AGENT_KEY=0x… POLICY_ID=… DOMAIN=example.test \
//   node dist/sdk/examples/purchase.js
import { privateKeyToAccount } from 'viem/accounts';
import { SpendControlAgent } from '@spend-control/agent';

export interface PurchaseExampleOptions {
  readonly baseUrl: string;
  readonly agentKey: `0x${string}`;
  readonly policyId: string;
  readonly domain: string;
}

export async function purchaseExample(options: PurchaseExampleOptions) {
  const account = privateKeyToAccount(options.agentKey);
  const agent = new SpendControlAgent({
    baseUrl: options.baseUrl,
    // The fund call is capped at the quoted amount itself; this is the ceiling above it.
    payer: { signer: account, maxAmountPerPaymentAtomic: 1_000_000n },
    pollIntervalMs: 100,
  });
  await agent.signIn(account, { policyId: options.policyId });
  return agent.buy('domains.check', { domain: options.domain });
}

if (require.main === module) {
  purchaseExample({
    baseUrl: process.env.SPEND_CONTROL_URL ?? 'http://127.0.0.1:4000',
    agentKey: (process.env.AGENT_KEY ?? '') as `0x${string}`,
    policyId: process.env.POLICY_ID ?? '',
    domain: process.env.DOMAIN ?? 'example.test',
  }).then(
    ({ intent, receipt }) => console.log(intent.state, receipt.integrity.digest),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
