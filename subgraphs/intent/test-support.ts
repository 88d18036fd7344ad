// For the intent subgraph's module tests: a resolver context on a test database (the caller's
// clock, a fresh sealing key), policies created through the policy subgraph's writes, fresh wire
// intents (their own nonce and item, so never a duplicate unless a test asks), the window summed
// from the raw rows (the reference the running totals are held to), and a settlement posting in
// the fixtures' asset for consuming reservations. A folder's tests reach another folder's code
// through the re-exports below, so tests add no folder loop (.dependency-cruiser.cjs
// no-folder-cycles-in-subgraph counts test files too).
import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import type { LedgerWindow, PolicySnapshot } from '../../core/engine';
import {
  freshWireIntent,
  policyDocument,
  rulesOf,
  TOKEN,
  type NamedPolicy,
} from '../../core/test-support/spend-fixtures';
import type { TestDatabase } from '../../platform/db/testDb';
import { deriveSealingKey } from '../../platform/sealing';
import type { SubgraphContext } from '../kit';
import { accountId, assetId } from '../ledger';
import { registerAsset } from '../ledger';
import { createPolicy } from '../policy';
import { utcDay } from './day';
import { recentApprovals } from './preflight/window';
import type { ReservationPosting } from './reservations/consumeOrRelease';

export interface CreatedPolicy {
  policyId: string;
  policyHash: string;
  version: number;
}

export interface IntentTestKit {
  readonly ctx: SubgraphContext;
  newPolicy(overrides?: Record<string, unknown>): Promise<CreatedPolicy>;
  /** A fresh intent for the policy, its deadline an hour after the clock. */
  intentFor(policy: NamedPolicy, overrides?: Record<string, unknown>): Record<string, unknown>;
}

export function intentTestKit(db: TestDatabase, nowMs: () => number): IntentTestKit {
  return {
    ctx: {
      actor: { kind: 'anonymous' },
      db: db.pool,
      now: () => new Date(nowMs()),
      correlationId: 'cor_0123456789abcdef',
      sealingKey: deriveSealingKey(randomBytes(32)),
    },
    async newPolicy(overrides = {}) {
      const rules = rulesOf(
        policyDocument({ owner: `0x${randomBytes(20).toString('hex')}`, ...overrides }),
      );
      const row = await createPolicy({ db: db.pool }, rules, {
        actor: 'admin',
        at: new Date(nowMs()),
      });
      return { policyId: row.id, policyHash: row.policyHash, version: row.version };
    },
    intentFor: (policy, overrides = {}) => freshWireIntent(policy, nowMs(), overrides),
  };
}

/**
 * The window of a policy at `now` summed from the raw rows (every reservation of the day, every
 * approved call of the hour, the last approval per provider): what the running totals of
 * migration 0005 must always equal.
 */
export async function rawWindow(
  db: Pool,
  policyId: string,
  policy: PolicySnapshot | null,
  now: Date,
  provider: string | null,
): Promise<LedgerWindow> {
  // UTC_DAY: what was approved on the day, settled or still reserved. ROLLING_24H: what settled in
  // the 24 hours before now, and every reservation still active.
  const rolling = policy?.rules.budgetWindow === 'ROLLING_24H';
  const sums = await db.query<{ settled: string; reserved: string; calls: string }>(
    `SELECT
       (SELECT coalesce(sum(settled_amount), 0)::text FROM intent.reservations
         WHERE policy_id = $1 AND state = 'CONSUMED'
           AND CASE WHEN $4 THEN settled_at > $3::timestamptz - interval '24 hours' ELSE day = $2::date END) AS settled,
       (SELECT coalesce(sum(amount), 0)::text FROM intent.reservations
         WHERE policy_id = $1 AND ($4 OR day = $2::date) AND state = 'ACTIVE' AND expires_at > $3) AS reserved,
       (SELECT count(*)::text FROM intent.approved_calls
         WHERE policy_id = $1 AND approved_at > $3::timestamptz - interval '1 hour') AS calls`,
    [policyId, utcDay(now), now, rolling],
  );
  const windowMinutes = policy?.rules.duplicates.windowMinutes ?? 0;
  const recentApproved =
    windowMinutes > 0 ? await recentApprovals(db, policyId, now, windowMinutes) : [];
  const lastApprovedAtMsByProvider: Record<string, number> = {};
  const last = await db.query<{ provider: string; at: Date }>(
    `SELECT provider, max(approved_at) AS at FROM intent.approved_calls
      WHERE policy_id = $1 AND ($2::text IS NULL OR provider = $2) GROUP BY provider`,
    [policyId, provider],
  );
  for (const row of last.rows) lastApprovedAtMsByProvider[row.provider] = row.at.getTime();
  return {
    settledTodayAtomic: BigInt(sums.rows[0]!.settled),
    reservedTodayAtomic: BigInt(sums.rows[0]!.reserved),
    approvedCallsLastHour: Number(sums.rows[0]!.calls),
    recentApproved,
    lastApprovedAtMsByProvider,
    vendorScore: null,
  };
}

/** The fixtures' policy asset (USDT0 on eip155:196) as the ledger names it. */
export const FIXTURE_ASSET = assetId('eip155:196', TOKEN);

/** Registers the fixtures' asset with the ledger (idempotent), so reservations can be consumed. */
export async function registerFixtureAsset(db: Pool): Promise<void> {
  await registerAsset(db, { chain: 'eip155:196', token: TOKEN, symbol: 'USDT0', decimals: 6 });
}

/** A FUNDING group moving `amountAtomic` for the policy: what consuming a reservation posts here. */
export function fundingPosting(
  policyId: string,
  amountAtomic: bigint,
  idempotencyKey: string,
  asset = FIXTURE_ASSET,
): ReservationPosting {
  return {
    kind: 'FUNDING',
    asset,
    entries: [
      { account: accountId('TREASURY', asset, 'float'), amountAtomic },
      { account: accountId('USER_OBLIGATION', asset, policyId), amountAtomic: -amountAtomic },
    ],
    idempotencyKey,
  };
}

// What one folder's tests drive in another: a preflight (reservations' tests), a stored consumer
// intent moved through its states (trust's tests).
export { preflightPayment } from './preflight/dispatch';
export { validIntent } from './preflight/input';
export { currentPolicy } from './preflight/policy';
export { lockAndReadPreflight, readToolWindow } from './preflight/window';
export { insertConsumerIntent } from './consumer/store';
export { transitionConsumerIntent } from './consumer/transition';
