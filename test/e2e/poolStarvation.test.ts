// Pool starvation through the public surface: failing operator calls, four times as many as the
// pool has connections, run at once over REST while unrelated requests (/readyz, a GraphQL query)
// must keep answering at once. A code path that holds one connection while it waits for another
// from the same pool stalls every request of the process instead.
import { performance } from 'node:perf_hooks';
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

/** Generous: a healthy answer takes milliseconds, a starved pool holds callers for seconds (or for ever). */
const AT_ONCE_MS = 1_000;
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

async function timed(run: () => Promise<number>): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const status = await run();
  return { status, ms: performance.now() - started };
}

describe('pool starvation', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack();
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('keeps /readyz and GraphQL answering while 4x the pool size of operator calls fail at once', async () => {
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
      await waitForLockWaiters(holder, stack.db.name, poolSize);
      await holder.query('COMMIT');

      for (let round = 0; round < 5; round += 1) {
        const ready = await timed(
          async () =>
            (await fetch(`${stack.url}/readyz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }))
              .status,
        );
        const query = await timed(async () => {
          const response = await fetch(`${stack.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: '{ catalog { providers { id } } }' }),
            signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
          });
          return response.status;
        });
        expect(ready.status).toBe(200);
        expect(ready.ms).toBeLessThan(AT_ONCE_MS);
        expect(query.status).toBe(200);
        expect(query.ms).toBeLessThan(AT_ONCE_MS);
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
