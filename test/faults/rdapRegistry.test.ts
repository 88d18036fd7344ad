// Fault: the RDAP registry fails under load — first answering 500 to every domain request, then
// resetting every connection — and recovers a few seconds later. The registry is the devnet RDAP
// server; the purchases' delivery checks ask it (never the merchant). While it fails, a purchase the
// merchant has answered waits in DELIVERY_PENDING with its check retried (never COMPLETED on an
// unverified answer, never sent to MANUAL_REVIEW for a short outage); paid calls and preflights do
// not depend on it. Afterwards every purchase completes, every job drains, and the books and chains
// agree — without a restart.
import { faultAnswers, faultWorldOfFile, runThroughFault } from './run';

const file = faultWorldOfFile();

test('the RDAP registry answering 500, then resetting connections, under load: deliveries wait and retry, then every purchase completes verified, every job drains, books zero, no payment doubled', async () => {
  const world = file.world();
  const registry = world.registry!;
  const requestsAtStart = registry.stats.domainRequests;
  let requestsAtFault = 0;
  const run = await runThroughFault(world, file.agents(), {
    faultMs: 4_000,
    inject: async () => {
      requestsAtFault = registry.stats.domainRequests;
      registry.setFaults({ answer: 'HTTP_500' });
      setTimeout(() => {
        if (registry.faults.answer === 'HTTP_500') registry.setFaults({ answer: 'RESET' });
      }, 2_000);
    },
    // Delivery checks met the failing registry more than once (the 500s and the resets).
    felt: () => registry.stats.domainRequests >= requestsAtFault + 3,
    heal: async () => registry.clearFaults(),
  });
  // Every purchase ended COMPLETED with its delivery verified by the registry.
  const { rows } = await world.stack.db.pool.query<{ state: string; verified: boolean | null }>(
    `SELECT state, (service_verified->>'verified')::boolean AS verified
       FROM intent.consumer_intents WHERE intent_id = ANY($1)`,
    [run.purchases],
  );
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows) expect(row).toEqual({ state: 'COMPLETED', verified: true });
  // The checks that met the fault were counted as failed and retried, not given up: each failed
  // check adds one to its purchase's delivery_attempts (the fault world makes one registry request
  // per check), and those purchases still ended COMPLETED, verified, above. A purchase that met the
  // fault once and was retried after the heal has 1, so the count is of purchases with any.
  const retried = await world.stack.db.pool.query<{ purchases: string; failedChecks: string }>(
    `SELECT count(*) FILTER (WHERE delivery_attempts > 0) AS purchases,
            coalesce(sum(delivery_attempts), 0) AS "failedChecks"
       FROM intent.consumer_intents WHERE intent_id = ANY($1)`,
    [run.purchases],
  );
  expect(Number(retried.rows[0]!.purchases)).toBeGreaterThan(0);
  // No failed check is invented: each one made its registry request. (Not only those of the fault
  // window: on a loaded host a check can also time out before or after it.)
  expect(Number(retried.rows[0]!.failedChecks)).toBeLessThanOrEqual(
    registry.stats.domainRequests - requestsAtStart,
  );
  console.log('answers while the registry failed', faultAnswers(run));
}, 150_000);
