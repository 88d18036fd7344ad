// The offer-receipt extension reads the settled payment of each paid answer by (tx_hash, payer).
// Without an index on those keys the read scanned the whole of ledger.service_payments, so every
// paid call cost more the more payments there were (the soak: 229 → 914 buffers a call in ten
// minutes). This checks the plan, not a time: under a generic plan (as a cached statement runs)
// and with sequential scans priced out, the read must still be an index range on both keys.
import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';
import { SETTLED_PAYMENT_OF_TRANSACTION } from './extensions';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

async function genericPlan(): Promise<string> {
  const client = await db.pool.connect();
  try {
    await client.query('SET plan_cache_mode = force_generic_plan');
    await client.query('SET enable_seqscan = off');
    await client.query(`PREPARE probe(text, text) AS ${SETTLED_PAYMENT_OF_TRANSACTION}`);
    const plan = await client.query(
      `EXPLAIN (COSTS OFF) EXECUTE probe('0x${'ab'.repeat(32)}', '0x${'cd'.repeat(20)}')`,
    );
    return plan.rows.map((row) => row['QUERY PLAN']).join('\n');
  } finally {
    client.release(true); // its session was changed: closed, not pooled
  }
}

describe("the offer receipt's read of a settled payment", () => {
  it('is an index range on (tx_hash, payer), never a scan of every payment', async () => {
    const plan = await genericPlan();
    expect(plan).toMatch(/Index Scan using service_payments_tx_payer on service_payments/);
    expect(plan).toMatch(/Index Cond: \(\(tx_hash = \$1\) AND \(payer = \$2\)\)/);
    expect(plan).not.toMatch(/Seq Scan/);
  });
});
