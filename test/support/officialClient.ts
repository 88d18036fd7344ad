// The official x402 client (@x402/core + @x402/evm, wrapped by @x402/fetch) as the e2e tests pay
// with it: one wallet, one network, one allowed asset with a per-payment cap. The tests pay through
// the library a real agent would use, never through a hand-built PAYMENT-SIGNATURE.
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { ConsumerRails } from '../../subgraphs/kit';

export interface OfficialPayment {
  /** CAIP-2 network the client signs for, e.g. 'eip155:196'. */
  readonly network: `${string}:${string}`;
  /** The one token address the spend controls allow on that network. */
  readonly asset: string;
  /** The spend controls' cap per payment, atomic units; default '1000000' (1 USD₮0). */
  readonly maxAmountPerPayment?: string;
  /** When given, every PAYMENT-SIGNATURE header the client sends is pushed here. */
  readonly sentSignatures?: string[];
}

/** The payment the consumer rails' funding leg takes: its network and (lowercased) token. */
export function fundingPayment(rails: ConsumerRails): OfficialPayment {
  return {
    network: rails.funding.network as `${string}:${string}`,
    asset: rails.funding.token.toLowerCase(),
  };
}

/** The official client of `payer`, allowed only `payment.asset` up to the cap. */
export function officialClient(payer: PrivateKeyAccount, payment: OfficialPayment): x402Client {
  const client = new x402Client().register(payment.network, new ExactEvmScheme(payer));
  client.setSpendControls({
    allowedAssets: [
      {
        network: payment.network,
        asset: payment.asset,
        maxAmountPerPayment: payment.maxAmountPerPayment ?? '1000000',
      },
    ],
  });
  return client;
}

/** fetch wrapped by @x402/fetch around that client: a 402 is paid and the request repeated. */
export function officialFetch(payer: PrivateKeyAccount, payment: OfficialPayment): typeof fetch {
  const sent = payment.sentSignatures;
  const base: typeof fetch =
    sent === undefined
      ? fetch
      : async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
          const request = new Request(input, init);
          const header = request.headers.get('payment-signature');
          if (header) sent.push(header);
          return fetch(request);
        };
  return wrapFetchWithPayment(base, officialClient(payer, payment)) as typeof fetch;
}
