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
  // The checks that met the fault were retried, not given up: some purchase needed more than one.
  const retried = await world.stack.db.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM intent.consumer_intents
      WHERE intent_id = ANY($1) AND (delivery_attempts > 1)`,
    [run.purchases],
  );
  expect(Number(retried.rows[0]!.n)).toBeGreaterThan(0);
  console.log('answers while the registry failed', faultAnswers(run));
}, 150_000);
