// The x402 payment records partitioned by month of payment id (ledger migration 0015): a table
// converted with payments in it keeps every row and id and the rules its unique keys held (one
// record per authorization, one live funding per intent), now in the key tables; a new claim lands
// in its month; the keys are the database's, not the service's to write, and are given back when
// a claim is forgotten or a funding fails; and archive detaches whole past months, stopping at the
// first one still in use, while the keys of an archived month still refuse its authorizations.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { newServicePaymentId } from '../../../core/canon/ids';
import { migrate } from '../../../platform/db/migrate';
import {
  detachMonthPartitions,
  monthsKeptOpen,
  SERVICE_PAYMENTS,
} from '../../../platform/db/monthPartitions';
import { projectRoot } from '../../../platform/paths';
import { createTestDatabase, type TestDatabase } from '../../../platform/db/testDb';
import { recordFailed } from './bookings';
import { claimFundingPayment } from './funding';
import { findPayment, getPayment } from './reads';
import type { FundingTarget, PaymentClaim, ServicePayment } from './record';
import { claimPayment, releaseClaim } from './writes';
import { paymentClaimFor as claimFor, registerRails } from '../test-support';

const TX = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

function fundingTarget(): FundingTarget {
  return { policyId: '7', intentRef: `ci_${randomBytes(12).toString('hex')}` };
}

/** `YYYY_MM` of a date's UTC month. */
function monthTag(date: Date): string {
  return `${date.getUTCFullYear()}_${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** A claim written as a bare INSERT (what migration 0003 allowed), with its payment id made at `atMs`. */
async function insertedClaim(
  pool: Pool,
  claim: PaymentClaim,
  atMs: number,
  funding: FundingTarget | null = null,
): Promise<string> {
  const paymentId = newServicePaymentId(undefined, atMs);
  await pool.query(
    `INSERT INTO ledger.service_payments
       (payment_id, network, asset, payer, nonce, pay_to, amount, valid_before, route, request_digest, state,
        lease_until, purpose, policy_id, intent_ref)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'SETTLING', now() + interval '30 seconds', $11, $12, $13)`,
    [
      paymentId,
      claim.network,
      claim.asset,
      claim.payer,
      claim.nonce,
      claim.payTo,
      claim.amountAtomic.toString(),
      claim.validBefore.toString(),
      claim.route,
      claim.requestDigest,
      funding ? 'FUNDING' : 'FEE',
      funding?.policyId ?? null,
      funding?.intentRef ?? null,
    ],
  );
  return paymentId;
}

async function partitionOf(db: TestDatabase, paymentId: string): Promise<string> {
  const { rows } = await db.adminPool.query<{ part: string }>(
    'SELECT tableoid::regclass::text AS part FROM ledger.service_payments WHERE payment_id = $1',
    [paymentId],
  );
  return rows[0]!.part;
}

/** The chain proved the authorization expired unused (chain time past validBefore). */
function failExpired(pool: Pool, payment: ServicePayment): Promise<ServicePayment | null> {
  return recordFailed(pool, payment, {
    reason: 'invalid_exact_evm_payload_authorization_valid_before',
    blockNumber: 100n,
    chainTimeS: payment.validBefore,
  });
}

describe('payments converted with a history in them', () => {
  let db: TestDatabase;
  let rootDir: string;
  let before: unknown[] = [];
  const fee = claimFor();
  const liveFunding = claimFor({ route: 'POST /consumer/fund' });
  const failedFunding = claimFor({ route: 'POST /consumer/fund', validBefore: 1_000n });
  const liveTarget = fundingTarget();
  const failedTarget = fundingTarget();

  beforeAll(async () => {
    db = await createTestDatabase({ subgraphs: [] });
    db.pool.on('error', () => undefined);
    rootDir = mkdtempSync(path.join(os.tmpdir(), 'ledger-before-payment-months-'));
    cpSync(path.join(projectRoot(), 'subgraphs'), rootDir, {
      recursive: true,
      filter: (source) => {
        if (/\.ts$/.test(source)) return false;
        const version = /ledger\/migrations\/(\d{4})_[a-z0-9_]+\.sql$/.exec(source)?.[1];
        return version === undefined || Number(version) < 15;
      },
    });
    const migrator = new Pool({ connectionString: db.ownerUrl, max: 1 });
    try {
      await migrate(migrator, { rootDir, subgraphs: ['ledger'] });
      await registerRails(db.pool);
      const now = Date.now();
      await insertedClaim(db.pool, fee, now);
      await insertedClaim(db.pool, liveFunding, now, liveTarget);
      const failedId = await insertedClaim(db.pool, failedFunding, now, failedTarget);
      expect(await failExpired(db.pool, (await getPayment(db.pool, failedId))!)).toMatchObject({
        state: 'FAILED',
      });
      before = (
        await db.adminPool.query('SELECT * FROM ledger.service_payments ORDER BY payment_id')
      ).rows;
      await migrate(migrator, { subgraphs: ['ledger'] });
    } finally {
      await migrator.end();
    }
  });

  afterAll(async () => {
    await db?.drop();
    if (rootDir) rmSync(rootDir, { recursive: true, force: true });
  });

  test('keeps every payment and its id, in its month, each authorization claimed in the keys', async () => {
    const { rows } = await db.adminPool.query(
      'SELECT * FROM ledger.service_payments ORDER BY payment_id',
    );
    expect(rows).toEqual(before);
    expect(rows).toHaveLength(3);
    for (const row of rows as { payment_id: string; nonce: string }[]) {
      expect(await partitionOf(db, row.payment_id)).toBe(
        `ledger.service_payments_p${monthTag(new Date())}`,
      );
      const key = await db.adminPool.query(
        'SELECT payment_id FROM ledger.payment_authorizations WHERE nonce = $1',
        [row.nonce],
      );
      expect(key.rows).toEqual([{ payment_id: row.payment_id }]);
    }
    const live = await db.adminPool.query('SELECT intent_ref FROM ledger.live_fundings');
    expect(live.rows).toEqual([{ intent_ref: liveTarget.intentRef }]);
  });

  test('an authorization recorded before is not claimed again: its record is found', async () => {
    const again = await claimPayment(db.pool, fee, 30_000);
    expect(again.claimed).toBe(false);
    expect(again.payment).toMatchObject({ nonce: fee.nonce, state: 'SETTLING' });
  });

  test('an intent funded before refuses a second funding; one whose funding failed takes a new one', async () => {
    const refused = await claimFundingPayment(db.pool, claimFor(), liveTarget, 30_000);
    expect(refused.claimed).toBe(false);
    expect(refused.payment).toBeNull();
    expect(refused.claimed === false && refused.payment === null && refused.fundedBy).toMatchObject(
      { nonce: liveFunding.nonce, state: 'SETTLING' },
    );
    const taken = await claimFundingPayment(db.pool, claimFor(), failedTarget, 30_000);
    expect(taken.claimed).toBe(true);
  });
});

describe('payment months at work', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ subgraphs: ['ledger'], poolSize: 8 });
    db.pool.on('error', () => undefined);
    await registerRails(db.pool);
  });

  afterAll(async () => {
    await db?.drop();
  });

  test("a claim lands in its month's partition; one whose id no month covers, in the DEFAULT one", async () => {
    const { payment } = await claimPayment(db.pool, claimFor(), 30_000);
    expect(await partitionOf(db, payment.paymentId)).toBe(
      `ledger.service_payments_p${monthTag(new Date())}`,
    );
    const farFuture = await insertedClaim(db.pool, claimFor(), Date.parse('2071-05-09T10:00:00Z'));
    expect(await partitionOf(db, farFuture)).toBe('ledger.service_payments_pdefault');
  });

  test('a claim of a second funding for one intent is refused, and given back when the first fails or is forgotten', async () => {
    const target = fundingTarget();
    const first = await claimFundingPayment(
      db.pool,
      claimFor({ validBefore: 1_000n }),
      target,
      30_000,
    );
    expect(first.claimed).toBe(true);
    const second = claimFor();
    expect((await claimFundingPayment(db.pool, second, target, 30_000)).claimed).toBe(false);
    // The refused claim wrote nothing: its authorization is free for a payment it may still make.
    expect(await findPayment(db.pool, second)).toBeNull();
    expect(await failExpired(db.pool, first.payment!)).toMatchObject({ state: 'FAILED' });
    const third = await claimFundingPayment(db.pool, second, target, 30_000);
    expect(third.claimed).toBe(true);
    await releaseClaim(db.pool, third.payment!.paymentId);
    const fourth = await claimFundingPayment(db.pool, claimFor(), target, 30_000);
    expect(fourth.claimed).toBe(true);
    // The forgotten claim gave its authorization back too.
    expect((await claimPayment(db.pool, second, 30_000)).claimed).toBe(true);
  });

  test('a second record of an intent’s live funding is refused as the unique index refused it', async () => {
    const target = fundingTarget();
    await claimFundingPayment(db.pool, claimFor(), target, 30_000);
    await expect(insertedClaim(db.pool, claimFor(), Date.now(), target)).rejects.toMatchObject({
      code: '23505',
      constraint: 'service_payments_one_live_funding',
    });
  });

  test('the keys and the months are the database’s: the service role may read them, never write them', async () => {
    const claim = claimFor();
    await expect(
      db.pool.query(
        `INSERT INTO ledger.payment_authorizations (network, asset, payer, nonce, payment_id)
         VALUES ($1, $2, $3, $4, $5)`,
        [claim.network, claim.asset, claim.payer, claim.nonce, newServicePaymentId()],
      ),
    ).rejects.toMatchObject({ code: '42501' });
    await expect(
      db.pool.query('DELETE FROM ledger.payment_authorizations WHERE payer = $1', [claim.payer]),
    ).rejects.toMatchObject({ code: '42501' });
    await expect(
      db.pool.query("INSERT INTO ledger.live_fundings VALUES ('ci_' || repeat('0', 24), $1)", [
        newServicePaymentId(),
      ]),
    ).rejects.toMatchObject({ code: '42501' });
    await expect(
      db.pool.query(`DELETE FROM ledger.service_payments_p${monthTag(new Date())}`),
    ).rejects.toMatchObject({ code: '42501' });
    await expect(
      db.adminPool.query('UPDATE ledger.payment_authorizations SET payment_id = payment_id'),
    ).rejects.toThrow();
    await expect(
      db.pool.query('SELECT count(*) FROM ledger.payment_authorizations'),
    ).resolves.toBeDefined();
  });

  test('archive detaches whole past months, oldest first, stopping at the first one still in use; their keys stay', async () => {
    await db.adminPool.query(
      "SELECT ledger.ensure_payment_month_partitions('2025-01-15T00:00:00Z', '2025-03-15T00:00:00Z')",
    );
    // January: a claim the chain has not decided. February: failed, its authorization expired an
    // hour ago (a gateway whose clock runs behind may still take it: a day of slack). March:
    // failed and long expired.
    const january = claimFor({ validBefore: 1_000n });
    const januaryId = await insertedClaim(db.pool, january, Date.parse('2025-01-20T00:00:00Z'));
    const anHourAgoS = BigInt(Math.floor(Date.now() / 1000) - 3600);
    const februaryId = await insertedClaim(
      db.pool,
      claimFor({ validBefore: anHourAgoS }),
      Date.parse('2025-02-20T00:00:00Z'),
    );
    const failedUsed = await recordFailed(db.pool, (await getPayment(db.pool, februaryId))!, {
      reason: 'invalid_exact_evm_nonce_already_used',
      blockNumber: 100n,
      usedByTxHash: TX(1),
    });
    expect(failedUsed).toMatchObject({ state: 'FAILED' });
    const marchId = await insertedClaim(
      db.pool,
      claimFor({ validBefore: 1_000n }),
      Date.parse('2025-03-20T00:00:00Z'),
    );
    await failExpired(db.pool, (await getPayment(db.pool, marchId))!);
    expect(await partitionOf(db, januaryId)).toBe('ledger.service_payments_p2025_01');

    const cut = new Date('2025-04-01T00:00:00Z');
    await expect(detachMonthPartitions(db.pool, SERVICE_PAYMENTS, cut)).rejects.toMatchObject({
      code: '42501',
    });
    expect(await detachMonthPartitions(db.adminPool, SERVICE_PAYMENTS, cut)).toEqual([]);
    expect(await monthsKeptOpen(db.adminPool, cut, SERVICE_PAYMENTS)).toEqual([
      'ledger.service_payments_p2025_01',
      'ledger.service_payments_p2025_02',
      'ledger.service_payments_p2025_03',
    ]);

    // The chain decides January's claim: January goes, February (expired within the day) stops the rest.
    await failExpired(db.pool, (await getPayment(db.pool, januaryId))!);
    expect(await detachMonthPartitions(db.adminPool, SERVICE_PAYMENTS, cut)).toEqual([
      'ledger.service_payments_p2025_01',
    ]);
    expect(await monthsKeptOpen(db.adminPool, cut, SERVICE_PAYMENTS)).toEqual([
      'ledger.service_payments_p2025_02',
      'ledger.service_payments_p2025_03',
    ]);
    expect(await getPayment(db.pool, januaryId)).toBeNull();
    expect(await findPayment(db.pool, january)).toBeNull();
    // Its authorization is still one used: never claimed again.
    await expect(claimPayment(db.pool, january, 30_000)).rejects.toThrow(/gone/);
    const key = await db.adminPool.query(
      'SELECT payment_id FROM ledger.payment_authorizations WHERE nonce = $1',
      [january.nonce],
    );
    expect(key.rows).toEqual([{ payment_id: januaryId }]);
    const detached = await db.adminPool.query(
      'SELECT count(*)::int AS n FROM ledger.service_payments_p2025_01',
    );
    expect(detached.rows).toEqual([{ n: 1 }]);
  });
});
