// Fault: the owners' channel refuses under load — their webhook endpoint (where escalation notices
// and the owners' outbound events are POSTed) answers 503 to everything for a few seconds, then
// accepts again. The receiver is a real HTTP server on 127.0.0.1. While it refuses, escalations are
// still opened and answered to the agents (the notice is queued, its clock runs), purchases go on,
// and each refused delivery is kept PENDING and retried on its schedule; afterwards every notice
// and event is delivered, nothing is marked FAILED, and the books and chains agree — without a
// restart.
import { faultAnswers, faultWorldOfFile, runThroughFault } from './run';

const file = faultWorldOfFile();

test('the owners’ webhook channel answering 503 for 3 s under load: notices and events are retried, then every one is delivered, none FAILED, books zero, no payment doubled', async () => {
  const world = file.world();
  const receiver = world.receiver;
  let seenAtFault = 0;
  const run = await runThroughFault(world, file.agents(), {
    faultMs: 3_000,
    inject: async () => {
      seenAtFault = receiver.requests.length;
      receiver.failNext(503, 1_000);
    },
    // Notices and events met the refusal (several deliveries were answered 503).
    felt: () => receiver.requests.length >= seenAtFault + 3,
    heal: async () => receiver.clearFailures(),
  });
  const db = world.stack.db.pool;
  const notices = await db.query<{ state: string; n: string; retried: string }>(
    `SELECT state, count(*) AS n, count(*) FILTER (WHERE attempts > 1) AS retried
       FROM policy.channel_deliveries GROUP BY state`,
  );
  const events = await db.query<{ state: string; n: string; retried: string }>(
    `SELECT state, count(*) AS n, count(*) FILTER (WHERE attempts > 1) AS retried
       FROM policy.webhook_deliveries GROUP BY state`,
  );
  // Every notice sent (or cancelled as moot once its escalation ended), every event delivered.
  expect(notices.rows.map((row) => row.state).sort()).toEqual(expect.arrayContaining(['SENT']));
  for (const row of notices.rows) expect(['SENT', 'CANCELLED']).toContain(row.state);
  expect(events.rows.map((row) => row.state)).toEqual(['DELIVERED']);
  // The refusals were retried, not dropped.
  const retried = [...notices.rows, ...events.rows].reduce((n, row) => n + Number(row.retried), 0);
  expect(retried).toBeGreaterThan(0);
  console.log('deliveries', { notices: notices.rows, events: events.rows });
  console.log('answers while the channel refused', faultAnswers(run));
}, 150_000);
