// The preflight bench's client side, run on a worker thread of its own: CLIENTS loops over
// node:http, each sending its next POST /preflight_payment (to the gateway, or the same operation
// straight to the intent subgraph) as soon as the last answered, timing each after the warm-up.
import http from 'node:http';
import { wireIntent } from '../core/test-support/spend-fixtures';
import { formatIsoSeconds } from '../core/validation/timestamp';
import { ACTOR_HEADER, ANONYMOUS, signActor } from '../platform/actor';
import { MeasuredWindow } from './measuredWindow';

export const CLIENTS = 32;
export const WARMUP_SECONDS = 2;

export type Target = 'gateway' | 'subgraph';

export interface PolicyRef {
  policyId: string;
  policyHash: string;
}

/** One scenario's load, run by the client thread. */
export interface ClientJob {
  target: Target;
  url: string;
  policies: PolicyRef[];
  seconds: number;
  nonceStart: string;
  /** For the subgraph target: the actor secret (hex) and the persisted document. */
  actorSecretHex: string;
  document: string;
}

export interface ClientReport {
  latenciesMs: Float64Array;
  elapsedSeconds: number;
  statuses: Array<[number, number]>;
  /** CPU time of the client thread while measuring, or null off Linux. */
  clientCpuMs: number | null;
}

/** A fresh intent per call (nonce), small enough that the budget never runs out during the run. */
function intentFor(policy: PolicyRef, nonce: bigint) {
  return wireIntent(policy, {
    agentId: 'bench-agent',
    amount: '1000',
    deadline: formatIsoSeconds(Math.floor(Date.now() / 1000) + 3600),
    nonce: nonce.toString(),
  });
}

/** POSTs a JSON body to `target` over `agent` and resolves with the status, the body drained. */
function poster(
  target: URL,
  agent: http.Agent,
): (body: string, headers: Record<string, string>) => Promise<number> {
  return (body, headers) =>
    new Promise<number>((resolve, reject) => {
      const request = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (response) => {
          response.on('data', () => undefined);
          response.on('end', () => resolve(response.statusCode ?? 0));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(body);
    });
}

/** The client thread: CLIENTS loops, each sending its next request as soon as the last answered. */
export async function runClients(job: ClientJob): Promise<ClientReport> {
  const secret = Buffer.from(job.actorSecretHex, 'hex');
  // node:http with a keep-alive agent: the client shares the machine with the server, and fetch
  // (undici, web streams) costs several times its CPU per request.
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const post = poster(new URL(job.url), agent);
  const send = (policy: PolicyRef, nonce: bigint): Promise<number> =>
    job.target === 'gateway'
      ? post(JSON.stringify({ policyId: policy.policyId, intent: intentFor(policy, nonce) }), {})
      : post(
          JSON.stringify({
            query: job.document,
            operationName: 'PreflightPayment',
            variables: { policyId: policy.policyId, intent: intentFor(policy, nonce) },
          }),
          // The field admits only the REST layer's paid call, exactly what the gateway signs after its paywall.
          { [ACTOR_HEADER]: signActor(ANONYMOUS, secret, Date.now(), 'POST /preflight_payment') },
        );
  const window = new MeasuredWindow(WARMUP_SECONDS, job.seconds);
  let nonce = BigInt(job.nonceStart);
  const client = async (index: number) => {
    let turn = index;
    while (Date.now() < window.until) {
      const policy = job.policies[turn % job.policies.length];
      turn += CLIENTS;
      nonce += 1n;
      const started = process.hrtime.bigint();
      window.record(started, await send(policy, nonce));
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_value, index) => client(index)));
  agent.destroy();
  return window.figures();
}
