// Fail closed under concurrency: two workers, each with its own connection pool, sweep the same
// overdue escalations at once; every escalation is expired exactly once (one EXPIRED state change,
// one EXPIRED event), and the database refuses any other way out of a final state. Workers also
// keep the append-only logs' coming months partitioned, side by side.
import { Pool } from 'pg';
import { NOW_MS } from '../../core/test-support/spend-fixtures';
import { silentLogger } from '../../platform/log';
import { startEscalationWorker } from '../../cli/worker';
import { MONTH_PARTITIONED_LOGS, monthPartitionsOf } from '../../platform/db/monthPartitions';
import { createEscalatingPolicy, escalatingIntent, preflight } from '../support/escalations';
import { startTestStack, type TestStack } from '../support/stack';

const OWNER = '0x4444444444444444444444444444444444444444';
const ESCALATIONS = 60;
let clockMs = NOW_MS;
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ now: () => new Date(clockMs) });
});

afterAll(async () => {
  await stack?.stop();
});

test('two workers sweeping at once expire each escalation exactly once', async () => {
  const policy = await createEscalatingPolicy(stack, OWNER, {
    dailyBudget: '1000.00',
    hardCap: '10.00',
  });
  const pollRefs: string[] = [];
  for (let index = 0; index < ESCALATIONS; index += 1) {
    pollRefs.push(
      (await preflight(stack, policy, escalatingIntent(policy, clockMs))).escalation.pollRef,
    );
  }
  clockMs += 30 * 60_000;
  const pools = [
    new Pool({ connectionString: stack.db.url, max: 4 }),
    new Pool({ connectionString: stack.db.url, max: 4 }),
  ];
  try {
    const workers = pools.map((db) =>
      startEscalationWorker({
        db,
        actorSecret: Buffer.alloc(32, 7),
        adapters: {},
        dashboardBaseUrl: 'http://127.0.0.1',
        intervalMs: 0,
        now: () => new Date(clockMs),
        log: silentLogger,
      }),
    );
    const rounds = await Promise.all(workers.map((worker) => worker.runOnce()));
    const expired = rounds.flatMap((round) => round.expired);
    expect(expired.sort()).toEqual([...pollRefs].sort());
    expect(new Set(expired).size).toBe(ESCALATIONS);
    const again = await Promise.all(workers.map((worker) => worker.runOnce()));
    expect(again.flatMap((round) => round.expired)).toEqual([]);
    for (const worker of workers) await worker.stop();
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
  }
  const events = await stack.db.pool.query<{ poll_ref: string; n: number }>(
    `SELECT poll_ref, count(*)::int AS n FROM policy.escalation_events WHERE kind = 'EXPIRED' GROUP BY poll_ref`,
  );
  expect(events.rows).toHaveLength(ESCALATIONS);
  expect(events.rows.every((row) => row.n === 1)).toBe(true);
  const states = await stack.db.pool.query(
    `SELECT state, count(*)::int AS n FROM policy.escalations GROUP BY state`,
  );
  expect(states.rows).toEqual([{ state: 'EXPIRED', n: ESCALATIONS }]);
});

test('the database refuses leaving a final state, rebinding, deciding after expiry and deleting', async () => {
  const [row] = (
    await stack.db.adminPool.query<{ poll_ref: string }>(
      `SELECT poll_ref FROM policy.escalations WHERE state = 'EXPIRED' LIMIT 1`,
    )
  ).rows;
  // As the server's superuser, so the triggers (not the service role's missing grants) refuse.
  const refused = async (sql: string) => {
    await expect(stack.db.adminPool.query(sql, [row!.poll_ref])).rejects.toThrow();
  };
  await refused(
    `UPDATE policy.escalations SET state = 'APPROVED', resolved_via = 'dashboard', resolved_at = created_at WHERE poll_ref = $1`,
  );
  await refused(`UPDATE policy.escalations SET amount = 1 WHERE poll_ref = $1`);
  await refused(`DELETE FROM policy.escalations WHERE poll_ref = $1`);
  const policy = await createEscalatingPolicy(stack, OWNER);
  const open = (await preflight(stack, policy, escalatingIntent(policy, clockMs))).escalation
    .pollRef;
  await expect(
    stack.db.adminPool.query(
      `UPDATE policy.escalations SET state = 'APPROVED', resolved_via = 'dashboard', resolved_at = expires_at WHERE poll_ref = $1`,
      [open],
    ),
  ).rejects.toThrow();
  await expect(
    stack.db.adminPool.query(
      `UPDATE policy.escalation_events SET detail = 'x' WHERE poll_ref = $1`,
      [open],
    ),
  ).rejects.toThrow(/append-only/);
});

test("two workers at once make the logs' coming months, each once", async () => {
  const at = Date.UTC(2072, 2, 10); // no row of the logs is that late: every month is made
  const workers = [0, 1].map(() =>
    startEscalationWorker({
      db: stack.db.pool,
      actorSecret: Buffer.alloc(32, 7),
      adapters: {},
      dashboardBaseUrl: 'http://127.0.0.1',
      intervalMs: 0,
      now: () => new Date(at),
      log: silentLogger,
    }),
  );
  await Promise.all(workers.map((worker) => worker.runOnce()));
  for (const worker of workers) await worker.stop();
  for (const log of MONTH_PARTITIONED_LOGS) {
    const made = (await monthPartitionsOf(stack.db.pool, log)).filter((name) =>
      name.includes('_p2072_'),
    );
    expect(made).toEqual(['03', '04', '05', '06'].map((month) => `${log}_p2072_${month}`));
  }
});
