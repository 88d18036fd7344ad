// The x402 bench's client side, run on a worker thread of its own so its HTTP work and signatures
// do not share the server's event loop: `clients` loops over node:http GET /ping_service, each
// sending its next call as soon as the last answered, timing each after the warm-up. A paid job
// signs its authorizations before the clock starts (a real agent's wallet signs on its own
// machine, not on the server's cores) and signs inside the clock only once that stock runs out,
// counted in the report.
import http from 'node:http';
import type { PaymentRequired } from '@x402/core/types';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { signedPaymentHeader } from '../devnet/agents/x402Payer';
import { MeasuredWindow } from './measuredWindow';

export interface PaidJob {
  /** One payer key per client. */
  readonly privateKeys: readonly Hex[];
  readonly required: PaymentRequired;
  /** Authorizations signed per client before the clock starts. */
  readonly presignedPerClient: number;
}

export interface ClientJob {
  readonly url: string;
  readonly clients: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  /** null: free calls, no payment header. */
  readonly paid: PaidJob | null;
}

export interface ClientReport {
  readonly latenciesMs: Float64Array;
  readonly elapsedSeconds: number;
  readonly statuses: Array<[number, number]>;
  /** 200 answers over the whole run, warm-up included (the chain counts those settlements too). */
  readonly okIncludingWarmup: number;
  /** CPU time of the client thread while measuring, or null off Linux. */
  readonly clientCpuMs: number | null;
  /** Authorizations signed before the clock, and inside it once the stock ran out. */
  readonly presigned: number;
  readonly signedInClock: number;
}

/** The worker's messages: 'ready' once signed (the warm-up starts), then the report. */
export type ClientMessage =
  { readonly type: 'ready' } | { readonly type: 'report'; readonly report: ClientReport };

/** GETs `target` with `headers` over `agent`; resolves with the status, the body drained. */
function getter(
  target: URL,
  agent: http.Agent,
): (headers: Record<string, string>) => Promise<number> {
  return (headers) =>
    new Promise<number>((resolve, reject) => {
      const request = http.request(
        { agent, host: target.hostname, port: target.port, path: target.pathname, headers },
        (response) => {
          response.on('data', () => undefined);
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end();
    });
}

/** Per client, the headers to present in turn, and a signer for when they run out. */
async function presign(job: ClientJob): Promise<{
  stock: string[][];
  signMore: (client: number) => Promise<string>;
}> {
  const paid = job.paid;
  if (paid === null) return { stock: [], signMore: () => Promise.reject(new Error('free job')) };
  const payers = paid.privateKeys.map((key) => privateKeyToAccount(key));
  const stock: string[][] = [];
  for (let client = 0; client < job.clients; client += 1) {
    const headers: string[] = [];
    for (let i = 0; i < paid.presignedPerClient; i += 1)
      headers.push(await signedPaymentHeader(paid.required, payers[client]));
    stock.push(headers.reverse());
  }
  return { stock, signMore: (client) => signedPaymentHeader(paid.required, payers[client]) };
}

/** Signs (for a paid job), says 'ready', then runs the clients and returns what they saw. */
export async function runClients(job: ClientJob, ready: () => void): Promise<ClientReport> {
  const { stock, signMore } = await presign(job);
  const presigned = stock.reduce((sum, headers) => sum + headers.length, 0);
  // node:http with a keep-alive agent: fetch (undici, web streams) costs several times its CPU.
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.clients });
  const get = getter(new URL(job.url), agent);
  let okIncludingWarmup = 0;
  let signedInClock = 0;
  ready();
  const window = new MeasuredWindow(job.warmupSeconds, job.seconds);
  const client = async (index: number) => {
    while (Date.now() < window.until) {
      let header: string | undefined;
      if (job.paid !== null) {
        header = stock[index].pop();
        if (header === undefined) {
          signedInClock += 1;
          header = await signMore(index);
        }
      }
      const started = process.hrtime.bigint();
      const status = await get(header === undefined ? {} : { 'payment-signature': header });
      if (status === 200) okIncludingWarmup += 1;
      window.record(started, status);
    }
  };
  await Promise.all(Array.from({ length: job.clients }, (_value, index) => client(index)));
  agent.destroy();
  return {
    ...window.figures(),
    okIncludingWarmup,
    presigned,
    signedInClock,
  };
}
