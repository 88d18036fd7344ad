// Pool starvation through the public surface: failing operator calls, four times as many as the
// pool has connections, run at once over REST while a writer outside the pool holds the table they
// need. While the storm is held up (every connection waiting on the lock, the rest queued), /healthz
// and a GraphQL query that needs no connection answer before the storm settles: the process is not
// blocked. Once the lock is released, /readyz and GraphQL answer again, the /readyz that queued for a
// connection during the hold included. A code path that holds one connection while it waits for
// another from the same pool stalls every request of the process for ever instead, which the hang
// guard on each probe turns into a failure. How fast they answer is bench/abuse.ts's business.
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { assetId } from '../../subgraphs/ledger';
import { postFunding, registerAsset } from '../../subgraphs/ledger';
import { postJson, startTestStack, type TestStack } from '../support/stack';

const USDT0 = {
  chain: 'eip155:196',
  token: '0x779ded0c9e1022225f8e0630b35a9b54be713736',
  symbol: 'USDT0',
  decimals: 6,
};

/** The hang guard: a probe still unanswered after this is aborted (a starved pool holds callers for ever). */
const PROBE_TIMEOUT_MS = 5_000;

/** Waits until `count` backends of the database wait for a lock (the pool is busy to its last connection). */
async function waitForLockWaiters(client: Client, database: string, count: number): Promise<void> {
  const deadline = Date.now() + PROBE_TIMEOUT_MS;
  for (;;) {
    // Inside a transaction the statistics views keep the first snapshot unless it is cleared.
    await client.query('SELECT pg_stat_clear_snapshot()');
    const waiting = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'",
      [database],
    );
    if (waiting.rows[0]!.n >= count) return;
    if (Date.now() > deadline)
      throw new Error(`only ${waiting.rows[0]!.n} of ${count} connections reached the lock`);
    await sleep(20);
  }
}

/**
 * An unrelated request's status: GET `path`, or for /graphql a catalog query (answered without a
 * database connection). The hang guard aborts (and so fails) a probe that never gets an answer.
 */
async function probe(url: string, path: '/healthz' | '/readyz' | '/graphql'): Promise<number> {
  const response = await fetch(
    `${url}${path}`,
    path === '/graphql'
      ? {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ catalog { providers { id } } }' }),
          signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
        }
      : { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) },
  );
  await response.arrayBuffer();
  return response.status;
}

describe('pool starvation', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack();
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('keeps /healthz and GraphQL answering while 4x the pool size of operator calls wait on a lock, and /readyz once they fail', async () => {
    const poolSize = stack.db.pool.options.max;
    expect(poolSize).toBeGreaterThan(0);
    const calls = 4 * poolSize;
    await registerAsset(stack.db.pool, USDT0);
    const groupId = await postFunding(stack.db.pool, {
      asset: assetId(USDT0.chain, USDT0.token),
      amountAtomic: 1_000n,
      policyId: '1',
      intentRef: `0x${'c3'.repeat(32)}`,
      idempotencyKey: 'starvation-fixture',
    });

    // A writer outside the pool (the superuser: the service may not lock tables) holds ledger.groups, so every reversal waits inside its transaction
    // (the whole pool busy, the rest queued); released, one reversal wins and the others fail at once.
    const holder = new Client({ connectionString: stack.db.adminUrl });
    await holder.connect();
    let answers: Array<{ status: number; body: any }>;
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE ledger.groups IN EXCLUSIVE MODE');
      const storm = Promise.all(
        Array.from({ length: calls }, (_, index) =>
          postJson(
            stack.url,
            '/ledger/reverse_group',
            { groupId, reason: 'starvation test', idempotencyKey: `starve-${index}` },
            stack.adminToken,
          ),
        ),
      );
      let stormSettled = false;
      void storm.finally(() => (stormSettled = true));
      await waitForLockWaiters(holder, stack.db.name, poolSize);
      // Queued for a connection behind the storm: it must be served once the lock is released.
      const queuedReady = probe(stack.url, '/readyz');
      for (let round = 0; round < 5; round += 1) {
        const answered = {
          health: await probe(stack.url, '/healthz'),
          query: await probe(stack.url, '/graphql'),
        };
        expect({ ...answered, stormSettled }).toEqual({
          health: 200,
          query: 200,
          stormSettled: false,
        });
        await sleep(10);
      }
      await holder.query('COMMIT');
      expect(await queuedReady).toBe(200);
      for (let round = 0; round < 5; round += 1) {
        expect(await probe(stack.url, '/readyz')).toBe(200);
        expect(await probe(stack.url, '/graphql')).toBe(200);
        await sleep(10);
      }
      answers = await storm;
    } finally {
      await holder.end();
    }

    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(refused).toHaveLength(calls - 1);
    for (const answer of refused) expect(answer.body.code).toBe('LEDGER_ALREADY_REVERSED');
    // Every refusal is still audited, each in its own row.
    const audited = await stack.db.pool.query<{ ok: string; n: number }>(
      `SELECT result->>'ok' AS ok, count(*)::int AS n FROM ledger.operator_actions WHERE action = 'REVERSE_GROUP' GROUP BY 1 ORDER BY 1`,
    );
    expect(audited.rows).toEqual([
      { ok: 'false', n: calls - 1 },
      { ok: 'true', n: 1 },
    ]);
  });
});
