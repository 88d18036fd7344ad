// bench:consumer's buying side: each consumer loops over whole purchases through the gateway
// (create → fund over x402 → execute → DELIVERY_PENDING, heard from the service's own NOTIFY),
// on a worker thread of its own or, with `inline`, on the service's thread (bench/consumer.ts).
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { challengeOf, signedPaymentHeader } from '../devnet/agents/x402Payer';

/** Purchases that start in the first seconds are not measured. */
export const WARMUP_SECONDS = 2;

interface Consumer {
  readonly account: PrivateKeyAccount;
  readonly policyId: string;
  readonly session: string;
}

/** A consumer as it crosses to the consumers' thread: its key, not its account object. */
export interface ConsumerSeed {
  readonly privateKey: Hex;
  readonly policyId: string;
  readonly session: string;
}

/** What the consumers' thread is given: where to buy, who buys, for how long. */
export interface ConsumersJob {
  readonly url: string;
  readonly databaseUrl: string;
  readonly consumers: readonly ConsumerSeed[];
  readonly seconds: number;
}

export interface Purchase {
  readonly intentId: string;
  readonly startedAt: number;
  readonly endedAt: number;
}

/** Waits for intents to reach a state, from the service's own NOTIFY (no polling). */
class StateWaiter {
  private readonly waiting = new Map<string, () => void>();
  private readonly reached = new Set<string>();

  constructor(private readonly target: string) {}

  onNotice(payload: string): void {
    const notice = JSON.parse(payload) as { intentId: string; state: string };
    if (notice.state !== this.target) return;
    const resolve = this.waiting.get(notice.intentId);
    if (resolve) {
      this.waiting.delete(notice.intentId);
      resolve();
    } else this.reached.add(notice.intentId);
  }

  wait(intentId: string, timeoutMs: number): Promise<void> {
    if (this.reached.delete(intentId)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(intentId);
        reject(new Error(`intent ${intentId} did not reach ${this.target} in ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.set(intentId, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

async function call(
  url: string,
  path: string,
  init: { method: string; token: string; body?: unknown; payment?: string },
): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: init.method,
    headers: {
      authorization: `Bearer ${init.token}`,
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(init.payment !== undefined ? { 'payment-signature': init.payment } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
}

/** A JSON answer as the bench reads it: plain objects, fields checked where used. */
export type Answer = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function expectStatus(
  response: Response,
  status: number,
  what: string,
): Promise<Answer> {
  const body = (await response.json().catch(() => ({}))) as Answer;
  if (response.status !== status)
    throw new Error(`${what} answered ${response.status}: ${JSON.stringify(body)}`);
  return body;
}

let domainCounter = 0;

/** One whole purchase: create → fund (x402) → execute → DELIVERY_PENDING. */
async function purchase(url: string, who: Consumer, waiter: StateWaiter): Promise<Purchase> {
  const startedAt = Date.now();
  domainCounter += 1;
  const domain = `bench-${domainCounter}-${randomBytes(3).toString('hex')}.test`;
  const created = await expectStatus(
    await call(url, '/consumer/intents', {
      method: 'POST',
      token: who.session,
      body: { capability: 'domains.check', params: { domain } },
    }),
    201,
    'create',
  );
  const intentId = created.intent.intentId as string;
  if (created.nextAction !== 'FUND') throw new Error(`not fundable: ${JSON.stringify(created)}`);
  const fundPath = `/consumer/intents/${intentId}/fund`;
  const challenge = challengeOf(await call(url, fundPath, { method: 'POST', token: who.session }));
  const payment = await signedPaymentHeader(challenge, who.account);
  await expectStatus(
    await call(url, fundPath, { method: 'POST', token: who.session, payment }),
    200,
    'fund',
  );
  const delivered = waiter.wait(intentId, 60_000);
  await expectStatus(
    await call(url, `/consumer/intents/${intentId}/execute`, {
      method: 'POST',
      token: who.session,
    }),
    202,
    'execute',
  );
  await delivered;
  return { intentId, startedAt, endedAt: Date.now() };
}

async function measure(
  url: string,
  seeds: readonly ConsumerSeed[],
  waiter: StateWaiter,
  seconds: number,
): Promise<Purchase[]> {
  const people: Consumer[] = seeds.map((seed) => ({
    account: privateKeyToAccount(seed.privateKey),
    policyId: seed.policyId,
    session: seed.session,
  }));
  const warmupUntil = Date.now() + WARMUP_SECONDS * 1000;
  const until = warmupUntil + seconds * 1000;
  const purchases: Purchase[] = [];
  await Promise.all(
    people.map(async (who) => {
      while (Date.now() < until) {
        const done = await purchase(url, who, waiter);
        if (done.startedAt >= warmupUntil && done.endedAt <= until) purchases.push(done);
      }
    }),
  );
  return purchases;
}

/**
 * The consumers' side of a run: hears the service's NOTIFY on a connection of its own and runs the
 * purchase loops; the purchases measured.
 */
export async function runConsumers(job: ConsumersJob): Promise<Purchase[]> {
  const waiter = new StateWaiter('DELIVERY_PENDING');
  const listener = new Client({ connectionString: job.databaseUrl });
  try {
    await listener.connect();
    listener.on('notification', (message) => waiter.onNotice(message.payload ?? '{}'));
    await listener.query('LISTEN consumer_intent');
    return await measure(job.url, job.consumers, waiter, job.seconds);
  } finally {
    await listener.end().catch(() => undefined);
  }
}
