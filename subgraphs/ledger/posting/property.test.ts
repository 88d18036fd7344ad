// Property: whatever valid groups are posted (random accounts, kinds, sizes and amounts across
// three assets on two rails, with retries and reversals mixed in), every asset's trial balance
// is zero and every account's balance equals the sum of its entries, as an in-memory model says.
import fc from 'fast-check';
import type { TestDatabase } from '../../../platform/db/testDb';
import { ACCOUNT_KINDS, accountId, assetId, GROUP_KINDS } from '../accounts/names';
import {
  postGroup,
  registerAsset,
  reverseGroup,
  type LedgerEntryInput,
  type PostGroupInput,
} from './writes';
import {
  createLedgerTestDatabase,
  FUNDING_CHAIN,
  registerRails,
  USDC,
  USDT0,
} from '../test-support';

const USDC_ON_FUNDING_RAIL = assetId(FUNDING_CHAIN, '0x00000000000000000000000000000000000c0c0c');
const ASSETS = [USDT0, USDC, USDC_ON_FUNDING_RAIL] as const;
const REFS = ['float', '7', 'domains.example', 'eip155-8453'] as const;
const POSTABLE_KINDS = GROUP_KINDS.filter((kind) => kind !== 'REVERSAL') as Array<
  PostGroupInput['kind']
>;
/** Big enough to exercise NUMERIC(78,0) far beyond 2^64, small enough that 64 of them fit. */
const MAX_AMOUNT_ATOMIC = 10n ** 70n;
const CONCURRENT_POSTINGS = 8;

let db: TestDatabase;
const modelBalances = new Map<string, bigint>();
const posted: Array<{ id: string; input: PostGroupInput; reversed: boolean }> = [];
let nextKey = 0;

beforeAll(async () => {
  db = await createLedgerTestDatabase({ subgraphs: ['ledger'], poolSize: CONCURRENT_POSTINGS });
  await registerRails(db.pool);
  await registerAsset(db.pool, {
    chain: FUNDING_CHAIN,
    token: USDC_ON_FUNDING_RAIL.split('|')[1],
    symbol: 'USDC',
    decimals: 6,
  });
});

afterAll(async () => {
  await db?.drop();
});

function apply(entries: readonly LedgerEntryInput[], sign: bigint): void {
  for (const entry of entries) {
    modelBalances.set(
      entry.account,
      (modelBalances.get(entry.account) ?? 0n) + sign * entry.amountAtomic,
    );
  }
}

const nonZeroAmount = fc
  .tuple(fc.bigInt({ min: 1n, max: MAX_AMOUNT_ATOMIC }), fc.boolean(), fc.nat({ max: 3 }))
  // Mostly realistic sizes, sometimes huge: both paths must stay exact.
  .map(([magnitude, negative, scale]) => {
    const sized = scale === 0 ? magnitude : (magnitude % 10n ** BigInt(6 * scale)) + 1n;
    return negative ? -sized : sized;
  });

const groupArbitrary = fc
  .record({
    kind: fc.constantFrom(...POSTABLE_KINDS),
    asset: fc.constantFrom(...ASSETS),
    lines: fc.array(
      fc.record({
        kind: fc.constantFrom(...ACCOUNT_KINDS),
        ref: fc.constantFrom(...REFS),
        amount: nonZeroAmount,
      }),
      {
        minLength: 1,
        maxLength: 7,
      },
    ),
    balancing: fc.record({
      kind: fc.constantFrom(...ACCOUNT_KINDS),
      ref: fc.constantFrom(...REFS),
    }),
  })
  .map(({ kind, asset, lines, balancing }) => {
    const entries: LedgerEntryInput[] = lines.map((line) => ({
      account: accountId(line.kind, asset, line.ref),
      amountAtomic: line.amount,
    }));
    const sum = entries.reduce((total, entry) => total + entry.amountAtomic, 0n);
    if (sum === 0n) {
      // The lines already balance; split the first one so the closing pair is still non-zero.
      entries.push({ account: accountId(balancing.kind, asset, balancing.ref), amountAtomic: 1n });
      entries.push({ account: accountId(balancing.kind, asset, balancing.ref), amountAtomic: -1n });
    } else {
      entries.push({
        account: accountId(balancing.kind, asset, balancing.ref),
        amountAtomic: -sum,
      });
    }
    return { kind, asset, entries };
  });

type Operation =
  | { op: 'post'; group: Pick<PostGroupInput, 'kind' | 'asset' | 'entries'> }
  | { op: 'retry'; pick: number }
  | { op: 'reverse'; pick: number };

const operationArbitrary: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 8, arbitrary: groupArbitrary.map((group) => ({ op: 'post' as const, group })) },
  { weight: 1, arbitrary: fc.nat().map((pick) => ({ op: 'retry' as const, pick })) },
  { weight: 1, arbitrary: fc.nat().map((pick) => ({ op: 'reverse' as const, pick })) },
);

async function perform(operation: Operation): Promise<void> {
  if (operation.op === 'post') {
    const input: PostGroupInput = { ...operation.group, idempotencyKey: `property:${nextKey++}` };
    const id = await postGroup(db.pool, input);
    posted.push({ id, input, reversed: false });
    apply(input.entries, 1n);
    return;
  }
  if (posted.length === 0) return;
  const target = posted[operation.pick % posted.length];
  if (operation.op === 'retry') {
    expect(await postGroup(db.pool, target.input)).toBe(target.id);
    return;
  }
  if (target.reversed) return;
  target.reversed = true;
  await reverseGroup(db.pool, {
    groupId: target.id,
    reason: 'property test',
    idempotencyKey: `reverse:${target.id}`,
  });
  apply(target.input.entries, -1n);
}

/** Runs a batch over several connections at once; retries and reversals wait for what they name. */
async function performBatch(operations: readonly Operation[]): Promise<void> {
  const posts = operations.filter((operation) => operation.op === 'post');
  for (let start = 0; start < posts.length; start += CONCURRENT_POSTINGS) {
    await Promise.all(posts.slice(start, start + CONCURRENT_POSTINGS).map(perform));
  }
  for (const operation of operations.filter((candidate) => candidate.op !== 'post'))
    await perform(operation);
}

async function assertLedgerMatchesModel(): Promise<void> {
  const trial = await db.pool.query<{
    asset: string;
    net: string;
    debits: string;
    credits: string;
  }>('SELECT asset, net::text, debits::text, credits::text FROM ledger.trial_balance');
  expect(trial.rows).toHaveLength(ASSETS.length);
  for (const row of trial.rows) {
    expect({ asset: row.asset, net: row.net }).toEqual({ asset: row.asset, net: '0' });
    expect(row.debits).toBe(row.credits);
  }
  const byKind = await db.pool.query<{ asset: string; net: string }>(
    'SELECT asset, sum(balance)::text AS net FROM ledger.kind_balances GROUP BY asset',
  );
  for (const row of byKind.rows) expect(row.net).toBe('0');

  const accounts = await db.pool.query<{ account_id: string; balance: string; entry_sum: string }>(
    `SELECT b.account_id, b.balance::text,
            (SELECT coalesce(sum(e.amount), 0) FROM ledger.entries e WHERE e.account_id = b.account_id)::text AS entry_sum
       FROM ledger.account_balances b`,
  );
  const stored = new Map(accounts.rows.map((row) => [row.account_id, row]));
  for (const row of accounts.rows) expect(row.balance).toBe(row.entry_sum);
  for (const [account, balance] of modelBalances) {
    expect({ account, balance: stored.get(account)?.balance }).toEqual({
      account,
      balance: balance.toString(),
    });
  }
  expect(stored.size).toBe(modelBalances.size);
}

it('keeps every asset on every rail at zero and every account equal to the sum of its entries', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(operationArbitrary, { minLength: 70, maxLength: 130 }),
      async (operations) => {
        await performBatch(operations);
        await assertLedgerMatchesModel();
      },
    ),
    { numRuns: 40 },
  );
  const count = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM ledger.groups');
  expect(Number(count.rows[0].n)).toBeGreaterThan(2000);
});
