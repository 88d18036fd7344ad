// The ledger's invariants, shown against a real PostgreSQL: append-only for every role, balance
// and completeness checked at COMMIT, single-asset groups, no zero entries, reversals that
// restore balances, and idempotent posting, also under concurrency. Direct writes to the ledger's
// tables run as the server's superuser (db.adminPool): the service role may not make them at all.
import { randomBytes } from 'node:crypto';
import { Client, type PoolClient } from 'pg';
import { AppError } from '../../../core/errors';
import { withTransaction } from '../../../platform/db/transaction';
import { serverUrl, type TestDatabase, withDatabase } from '../../../platform/db/testDb';
import { ACCOUNT_KINDS, accountId, GROUP_KINDS, treasuryAccount } from '../accounts/names';
import { accountBalance } from '../accounts/reads';
import { postFunding, postSettlement } from './groupKinds';
import { postCrossRailRecognition } from './recognition';
import { postGroup, postTreasuryTransfer, reverseGroup } from './writes';
import { ledgerErrorFrom } from '../sql';
import { createLedgerTestDatabase, intentId, registerRails, USDC, USDT0 } from '../test-support';

let db: TestDatabase;
const intruder = `ledger_intruder_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  db = await createLedgerTestDatabase({ subgraphs: ['ledger'], poolSize: 24 });
  await registerRails(db.pool);
});

afterAll(async () => {
  await db?.drop();
  const admin = new Client({ connectionString: serverUrl() });
  await admin.connect();
  try {
    await admin.query(`DROP ROLE IF EXISTS ${intruder}`);
  } finally {
    await admin.end();
  }
});

const treasury = treasuryAccount(USDT0);
const obligation = accountId('USER_OBLIGATION', USDT0, '7');

function key(label: string): string {
  return `${label}:${randomBytes(6).toString('hex')}`;
}

async function fund(amountAtomic: bigint, label = 'funding'): Promise<string> {
  return postFunding(db.pool, {
    asset: USDT0,
    amountAtomic,
    policyId: '7',
    intentRef: intentId(1),
    idempotencyKey: key(label),
  });
}

async function sqlstateOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    return (error as { code?: string }).code ?? 'no sqlstate';
  }
  throw new Error('expected the statement to fail');
}

async function groupCount(): Promise<number> {
  const result = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM ledger.groups');
  return Number(result.rows[0].n);
}

describe('append-only, for every role', () => {
  beforeAll(async () => {
    await fund(100n, 'append-only');
  });

  it('refuses UPDATE, DELETE and TRUNCATE of entries and groups for a superuser', async () => {
    const owner = await db.adminPool.query<{ rolsuper: boolean; owner: string }>(
      "SELECT r.rolsuper, t.tableowner AS owner FROM pg_roles r, pg_tables t WHERE r.rolname = current_user AND t.schemaname = 'ledger' AND t.tablename = 'entries'",
    );
    expect(owner.rows[0].rolsuper).toBe(true);
    for (const statement of [
      'UPDATE ledger.entries SET amount = amount * 2',
      'DELETE FROM ledger.entries',
      'TRUNCATE ledger.entries CASCADE',
      "UPDATE ledger.groups SET memo = 'edited'",
      'DELETE FROM ledger.groups',
      'TRUNCATE ledger.groups CASCADE',
      'UPDATE ledger.entries SET amount = 1 WHERE false',
    ]) {
      expect({ statement, sqlstate: await sqlstateOf(db.adminPool.query(statement)) }).toEqual({
        statement,
        sqlstate: 'LG006',
      });
    }
    expect(await accountBalance(db.pool, treasury)).toBeGreaterThan(0n);
  });

  it('still refuses them with triggers for replication sessions switched off (session_replication_role = replica)', async () => {
    const client = await db.adminPool.connect();
    try {
      await client.query('SET session_replication_role = replica');
      expect(await sqlstateOf(client.query('DELETE FROM ledger.entries'))).toBe('LG006');
      expect(await sqlstateOf(client.query('UPDATE ledger.groups SET memo = NULL'))).toBe('LG006');
    } finally {
      await client.query('RESET session_replication_role');
      client.release();
    }
  });

  it('refuses them for a non-superuser role that owns nothing, even when it holds UPDATE and DELETE grants', async () => {
    // A password, because the embedded server authenticates with SCRAM (the CI server trusts loopback).
    const password = randomBytes(12).toString('hex');
    await db.adminPool.query(`CREATE ROLE ${intruder} LOGIN NOSUPERUSER PASSWORD '${password}'`);
    await db.adminPool.query(`GRANT USAGE ON SCHEMA ledger TO ${intruder}`);
    await db.adminPool.query(
      `GRANT SELECT, UPDATE, DELETE, TRUNCATE ON ledger.entries, ledger.groups TO ${intruder}`,
    );
    const url = new URL(withDatabase(serverUrl(), db.name));
    url.username = intruder;
    url.password = password;
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    try {
      const who = await client.query<{ rolsuper: boolean }>(
        'SELECT rolsuper FROM pg_roles WHERE rolname = current_user',
      );
      expect(who.rows[0].rolsuper).toBe(false);
      expect(await sqlstateOf(client.query('UPDATE ledger.entries SET amount = amount + 1'))).toBe(
        'LG006',
      );
      expect(await sqlstateOf(client.query('DELETE FROM ledger.entries'))).toBe('LG006');
      expect(await sqlstateOf(client.query('DELETE FROM ledger.groups'))).toBe('LG006');
      expect(await sqlstateOf(client.query('TRUNCATE ledger.entries'))).toBe('LG006');
      // Posting needs an explicit EXECUTE grant: money moves only through the ledger's functions.
      expect(
        await sqlstateOf(client.query("SELECT ledger.post_group('FUNDING', 'x', '[]', 'k')")),
      ).toBe('42501');
    } finally {
      await client.end();
    }
  });
});

describe('what COMMIT refuses', () => {
  const group = (suffix: string) => `lg_${suffix.padStart(24, '0')}`;

  async function insertGroup(
    client: PoolClient,
    id: string,
    entryCount: number,
    asset = USDT0,
  ): Promise<void> {
    await client.query(
      "INSERT INTO ledger.groups (group_id, kind, asset, entry_count, idempotency_key) VALUES ($1, 'FUNDING', $2, $3, $4)",
      [id, asset, entryCount, key('direct')],
    );
  }

  async function insertEntry(
    client: PoolClient,
    id: string,
    no: number,
    account: string,
    amount: string,
    entryCount = 2,
    asset = USDT0,
  ) {
    await client.query(
      'INSERT INTO ledger.entries (group_id, entry_no, account_id, asset, amount, entry_count) VALUES ($1, $2, $3, $4, $5, $6)',
      [id, no, account, asset, amount, entryCount],
    );
  }

  beforeAll(async () => {
    await fund(1n, 'accounts-exist');
  });

  it('refuses an unbalanced group at COMMIT, and nothing of it remains', async () => {
    const before = await groupCount();
    const failure = withTransaction(db.adminPool, async (client) => {
      await insertGroup(client, group('a1'), 2);
      await insertEntry(client, group('a1'), 1, treasury, '100');
      await insertEntry(client, group('a1'), 2, obligation, '-99');
    });
    await expect(failure).rejects.toMatchObject({ code: 'LG001' });
    expect(ledgerErrorFrom(await failure.catch((error) => error))?.code).toBe(
      'LEDGER_GROUP_UNBALANCED',
    );
    expect(await groupCount()).toBe(before);
  });

  it('refuses a group inserted with no entries at all, and one missing a declared entry', async () => {
    await expect(
      withTransaction(db.adminPool, (client) => insertGroup(client, group('a2'), 2)),
    ).rejects.toMatchObject({ code: 'LG001' });
    const missingOne = withTransaction(db.adminPool, async (client) => {
      await insertGroup(client, group('a3'), 3);
      await insertEntry(client, group('a3'), 1, treasury, '5', 3);
      await insertEntry(client, group('a3'), 2, obligation, '-5', 3);
    });
    await expect(missingOne).rejects.toMatchObject({ code: 'LG001' });
  });

  it('refuses a mixed-asset group, directly and through post_group, and nothing of it remains', async () => {
    const before = await groupCount();
    const usdcTreasury = treasuryAccount(USDC);
    const accountOfOtherAsset = withTransaction(db.adminPool, async (client) => {
      await insertGroup(client, group('b1'), 2);
      await insertEntry(client, group('b1'), 1, usdcTreasury, '100');
      await insertEntry(client, group('b1'), 2, obligation, '-100');
    });
    await expect(accountOfOtherAsset).rejects.toMatchObject({
      code: '23514',
      constraint: 'entries_account_asset_matches',
    });
    const entryOfOtherAsset = withTransaction(db.adminPool, async (client) => {
      await insertGroup(client, group('b2'), 2);
      await insertEntry(client, group('b2'), 1, usdcTreasury, '100', 2, USDC);
      await insertEntry(client, group('b2'), 2, obligation, '-100');
    });
    await expect(entryOfOtherAsset).rejects.toMatchObject({
      code: '23503',
      constraint: 'entries_group_fkey',
    });
    const viaFunction = postGroup(db.pool, {
      kind: 'FUNDING',
      asset: USDT0,
      entries: [
        { account: usdcTreasury, amountAtomic: 100n },
        { account: obligation, amountAtomic: -100n },
      ],
      idempotencyKey: key('mixed'),
    });
    await expect(viaFunction).rejects.toMatchObject({ code: 'LEDGER_GROUP_INVALID' });
    expect(await groupCount()).toBe(before);
  });

  it('refuses a zero entry, directly and through post_group', async () => {
    const before = await groupCount();
    const direct = withTransaction(db.adminPool, async (client) => {
      await insertGroup(client, group('c1'), 2);
      await insertEntry(client, group('c1'), 1, treasury, '0');
      await insertEntry(client, group('c1'), 2, obligation, '0');
    });
    await expect(direct).rejects.toMatchObject({
      code: '23514',
      constraint: 'entries_amount_nonzero',
    });
    const viaFunction = postGroup(db.pool, {
      kind: 'FUNDING',
      asset: USDT0,
      entries: [
        { account: treasury, amountAtomic: 0n },
        { account: obligation, amountAtomic: 0n },
      ],
      idempotencyKey: key('zero'),
    });
    await expect(viaFunction).rejects.toMatchObject({ code: 'LEDGER_GROUP_INVALID' });
    expect(await groupCount()).toBe(before);
  });

  it('refuses an unbalanced posting through post_group before writing anything', async () => {
    const posting = postGroup(db.pool, {
      kind: 'FUNDING',
      asset: USDT0,
      entries: [
        { account: treasury, amountAtomic: 10n },
        { account: obligation, amountAtomic: -9n },
      ],
      idempotencyKey: key('unbalanced'),
    });
    await expect(posting).rejects.toBeInstanceOf(AppError);
    await expect(posting).rejects.toMatchObject({ code: 'LEDGER_GROUP_UNBALANCED' });
  });

  it('gives a committed group no free slot: a later entry cannot join it', async () => {
    const id = await fund(3n, 'closed');
    const appended = withTransaction(db.adminPool, async (client) => {
      await insertEntry(client, id, 3, treasury, '1');
    });
    await expect(appended).rejects.toMatchObject({
      code: '23514',
      constraint: 'entries_slot_in_range',
    });
    const duplicateSlot = withTransaction(db.adminPool, async (client) => {
      await insertEntry(client, id, 2, treasury, '1');
    });
    await expect(duplicateSlot).rejects.toMatchObject({ code: '23505' });
  });

  it('refuses an entry of no group, also with triggers for replication sessions switched off', async () => {
    const before = await groupCount();
    const orphan = withTransaction(db.adminPool, async (client) => {
      await insertEntry(client, group('e1'), 1, treasury, '5');
    });
    await expect(orphan).rejects.toMatchObject({ code: '23503', constraint: 'entries_group_fkey' });
    const replica = withTransaction(db.adminPool, async (client) => {
      await client.query('SET LOCAL session_replication_role = replica');
      await insertEntry(client, group('e2'), 1, treasury, '5');
    });
    await expect(replica).rejects.toMatchObject({
      code: '23503',
      constraint: 'entries_group_fkey',
    });
    const groupWithoutEntries = withTransaction(db.adminPool, async (client) => {
      await client.query('SET LOCAL session_replication_role = replica');
      await insertGroup(client, group('e3'), 2);
    });
    await expect(groupWithoutEntries).rejects.toMatchObject({ code: 'LG001' });
    expect(await groupCount()).toBe(before);
  });

  it('refuses entries that post to an account nobody opened', async () => {
    const failure = withTransaction(db.adminPool, async (client) => {
      await insertGroup(client, group('d1'), 2);
      await insertEntry(client, group('d1'), 1, accountId('SUSPENSE', USDT0, 'never-opened'), '5');
      await insertEntry(client, group('d1'), 2, obligation, '-5');
    });
    await expect(failure).rejects.toMatchObject({ code: 'LG002' });
  });
});

describe('reversal', () => {
  it('restores every balance, keeps both groups visible, and reverses a group at most once', async () => {
    const provider = accountId('PROVIDER_SETTLEMENT', USDC, 'domains.example');
    const usdcTreasury = treasuryAccount(USDC);
    const before = {
      provider: await accountBalance(db.pool, provider),
      float: await accountBalance(db.pool, usdcTreasury),
    };
    const settlement = await postSettlement(db.pool, {
      asset: USDC,
      amountAtomic: 50_000n,
      provider: 'domains.example',
      intentRef: intentId(2),
      policyId: '7',
      idempotencyKey: key('settle'),
    });
    expect(await accountBalance(db.pool, provider)).toBe(before.provider + 50_000n);

    const reversalKey = key('reverse');
    const reversal = await reverseGroup(db.pool, {
      groupId: settlement,
      reason: 'paid the wrong provider',
      idempotencyKey: reversalKey,
    });
    expect(await accountBalance(db.pool, provider)).toBe(before.provider);
    expect(await accountBalance(db.pool, usdcTreasury)).toBe(before.float);

    const both = await db.pool.query<{
      group_id: string;
      kind: string;
      reverses: string | null;
      memo: string | null;
      intent_ref: string;
    }>(
      'SELECT group_id, kind, reverses, memo, intent_ref FROM ledger.groups WHERE group_id = ANY($1) ORDER BY seq',
      [[settlement, reversal]],
    );
    expect(both.rows).toEqual([
      {
        group_id: settlement,
        kind: 'SETTLEMENT',
        reverses: null,
        memo: null,
        intent_ref: intentId(2),
      },
      {
        group_id: reversal,
        kind: 'REVERSAL',
        reverses: settlement,
        memo: 'paid the wrong provider',
        intent_ref: intentId(2),
      },
    ]);

    expect(
      await reverseGroup(db.pool, {
        groupId: settlement,
        reason: 'paid the wrong provider',
        idempotencyKey: reversalKey,
      }),
    ).toBe(reversal);
    await expect(
      reverseGroup(db.pool, {
        groupId: settlement,
        reason: 'again',
        idempotencyKey: key('reverse-again'),
      }),
    ).rejects.toMatchObject({ code: 'LEDGER_ALREADY_REVERSED' });
    await expect(
      reverseGroup(db.pool, {
        groupId: 'lg_000000000000000000000bad',
        reason: 'x',
        idempotencyKey: key('missing'),
      }),
    ).rejects.toMatchObject({ code: 'LEDGER_GROUP_NOT_FOUND' });
  });

  it('reverses a reversal, which puts the original amounts back', async () => {
    const before = await accountBalance(db.pool, treasury);
    const original = await fund(31n, 'twice');
    const reversal = await reverseGroup(db.pool, {
      groupId: original,
      reason: 'mistake',
      idempotencyKey: key('undo'),
    });
    expect(await accountBalance(db.pool, treasury)).toBe(before);
    await reverseGroup(db.pool, {
      groupId: reversal,
      reason: 'the reversal was the mistake',
      idempotencyKey: key('redo'),
    });
    expect(await accountBalance(db.pool, treasury)).toBe(before + 31n);
  });

  it('lets exactly one of many concurrent reversals of one group win', async () => {
    const original = await fund(77n, 'race');
    const attempts = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        reverseGroup(db.pool, {
          groupId: original,
          reason: `attempt ${i}`,
          idempotencyKey: key(`race-${i}`),
        }),
      ),
    );
    const won = attempts.filter((attempt) => attempt.status === 'fulfilled');
    const lost = attempts.filter(
      (attempt): attempt is PromiseRejectedResult => attempt.status === 'rejected',
    );
    expect(won).toHaveLength(1);
    expect(lost.map((attempt) => (attempt.reason as AppError).code)).toEqual(
      Array(7).fill('LEDGER_ALREADY_REVERSED'),
    );
  });
});

describe('idempotency', () => {
  it('returns the first group for a retried key and refuses the key with another payload', async () => {
    const retryKey = key('retry');
    const input = {
      asset: USDT0,
      amountAtomic: 42n,
      policyId: '7',
      intentRef: intentId(3),
      idempotencyKey: retryKey,
    };
    const before = await groupCount();
    const first = await postFunding(db.pool, input);
    expect(await postFunding(db.pool, input)).toBe(first);
    expect(await groupCount()).toBe(before + 1);
    await expect(postFunding(db.pool, { ...input, amountAtomic: 43n })).rejects.toMatchObject({
      code: 'LEDGER_IDEMPOTENCY_CONFLICT',
    });
    await expect(postFunding(db.pool, { ...input, intentRef: intentId(4) })).rejects.toMatchObject({
      code: 'LEDGER_IDEMPOTENCY_CONFLICT',
    });
  });

  it('treats the same entries in another order as the same posting', async () => {
    const orderKey = key('order');
    const entries = [
      { account: treasury, amountAtomic: 9n },
      { account: obligation, amountAtomic: -9n },
    ];
    const first = await postGroup(db.pool, {
      kind: 'FUNDING',
      asset: USDT0,
      entries,
      idempotencyKey: orderKey,
    });
    expect(
      await postGroup(db.pool, {
        kind: 'FUNDING',
        asset: USDT0,
        entries: [...entries].reverse(),
        idempotencyKey: orderKey,
      }),
    ).toBe(first);
  });

  it('posts exactly one group when 20 connections post the same key at once', async () => {
    const sharedKey = key('stampede');
    const clients = await Promise.all(Array.from({ length: 20 }, () => db.pool.connect()));
    try {
      // Each connection opens a transaction first, so all 20 postings really are in flight together.
      await Promise.all(clients.map((client) => client.query('BEGIN')));
      const ids = await Promise.all(
        clients.map(async (client) => {
          try {
            const id = await postFunding(client, {
              asset: USDT0,
              amountAtomic: 500n,
              policyId: '7',
              intentRef: intentId(5),
              idempotencyKey: sharedKey,
            });
            await client.query('COMMIT');
            return id;
          } catch (error) {
            await client.query('ROLLBACK');
            throw error;
          }
        }),
      );
      expect(new Set(ids).size).toBe(1);
    } finally {
      clients.forEach((client) => client.release());
    }
    const stored = await db.pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM ledger.groups WHERE idempotency_key = $1',
      [sharedKey],
    );
    expect(stored.rows[0].n).toBe('1');
    const entries = await db.pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM ledger.entries e JOIN ledger.groups g USING (group_id) WHERE g.idempotency_key = $1',
      [sharedKey],
    );
    expect(entries.rows[0].n).toBe('2');
  });
});

describe('the cross-rail purchase', () => {
  it('balances each asset on its own: 50250 USDT0 funded, 50000 USDC paid, 250 spread, the rest cleared by an operator sweep', async () => {
    const policyId = '90210';
    const intent = intentId(0xc0ffee);
    const provider = 'domains.example';
    const account = {
      fundingFloat: treasuryAccount(USDT0),
      settlementFloat: treasuryAccount(USDC),
      obligation: accountId('USER_OBLIGATION', USDT0, policyId),
      spread: accountId('SPREAD_REVENUE', USDT0, 'eip155-8453'),
      fundingClearing: accountId('CROSS_RAIL_CLEARING', USDT0, 'eip155-8453'),
      settlementClearing: accountId('CROSS_RAIL_CLEARING', USDC, 'eip155-196'),
      provider: accountId('PROVIDER_SETTLEMENT', USDC, provider),
    };
    const balances = async () =>
      Object.fromEntries(
        await Promise.all(
          Object.entries(account).map(async ([name, id]) => [
            name,
            await accountBalance(db.pool, id),
          ]),
        ),
      );
    const start = await balances();
    const delta = async () => {
      const now = await balances();
      return Object.fromEntries(
        Object.keys(account).map((name) => [name, now[name] - start[name]]),
      );
    };

    await postFunding(db.pool, {
      asset: USDT0,
      amountAtomic: 50_250n,
      policyId,
      intentRef: intent,
      idempotencyKey: `funding:${intent}`,
    });
    await postSettlement(db.pool, {
      asset: USDC,
      amountAtomic: 50_000n,
      provider,
      policyId,
      intentRef: intent,
      idempotencyKey: `settlement:${intent}`,
    });
    const recognition = await postCrossRailRecognition(db.pool, {
      funding: { asset: USDT0, amountAtomic: 50_250n },
      settlement: { asset: USDC, amountAtomic: 50_000n },
      feeAtomic: 0n,
      spreadAtomic: 250n,
      provider,
      policyId,
      intentRef: intent,
      idempotencyKey: `recognition:${intent}`,
    });
    expect(recognition.fundingGroupId).not.toBe(recognition.settlementGroupId);
    expect(await delta()).toEqual({
      fundingFloat: 50_250n,
      settlementFloat: -50_000n,
      obligation: 0n,
      spread: -250n,
      fundingClearing: -50_000n,
      settlementClearing: 50_000n,
      provider: 0n,
    });

    await postTreasuryTransfer(db.pool, {
      source: { asset: USDT0, amountAtomic: 50_000n },
      destination: { asset: USDC, amountAtomic: 50_000n },
      idempotencyKey: `sweep:${intent}`,
      memo: 'sweep after recognition',
    });
    expect(await delta()).toEqual({
      fundingFloat: 250n,
      settlementFloat: 0n,
      obligation: 0n,
      spread: -250n,
      fundingClearing: 0n,
      settlementClearing: 0n,
      provider: 0n,
    });
    const perIntent = await db.pool.query<{ asset: string; net: string }>(
      'SELECT g.asset, sum(e.amount)::text AS net FROM ledger.groups g JOIN ledger.entries e USING (group_id) WHERE g.intent_ref = $1 GROUP BY g.asset ORDER BY g.asset COLLATE "C"',
      [intent],
    );
    expect(perIntent.rows).toEqual([
      { asset: USDT0, net: '0' },
      { asset: USDC, net: '0' },
    ]);
  });

  it('posts a treasury transfer as a pair or not at all', async () => {
    const before = await groupCount();
    await expect(
      postTreasuryTransfer(db.pool, {
        source: { asset: USDT0, amountAtomic: 10n },
        destination: { asset: USDT0, amountAtomic: 10n },
        idempotencyKey: key('same-asset'),
      }),
    ).rejects.toMatchObject({ code: 'LEDGER_GROUP_INVALID' });
    await expect(
      postTreasuryTransfer(db.pool, {
        source: { asset: USDT0, amountAtomic: 10n },
        destination: { asset: USDC, amountAtomic: 0n },
        idempotencyKey: key('zero-leg'),
      }),
    ).rejects.toMatchObject({ code: 'LEDGER_GROUP_INVALID' });
    const takenKey = key('taken');
    await db.pool.query("SELECT ledger.post_group('FUNDING', $1, $2::jsonb, $3)", [
      USDC,
      JSON.stringify([
        { account: treasuryAccount(USDC), amount: '1' },
        { account: accountId('USER_OBLIGATION', USDC, '7'), amount: '-1' },
      ]),
      `${takenKey}:destination`,
    ]);
    const mid = await groupCount();
    await expect(
      postTreasuryTransfer(db.pool, {
        source: { asset: USDT0, amountAtomic: 10n },
        destination: { asset: USDC, amountAtomic: 9n },
        idempotencyKey: takenKey,
      }),
    ).rejects.toMatchObject({ code: 'LEDGER_IDEMPOTENCY_CONFLICT' });
    expect(await groupCount()).toBe(mid);
    expect(mid).toBe(before + 1);
  });
});

describe('the SQL API’s input rules', () => {
  const post = (entries: unknown, kind = 'FUNDING', asset = USDT0) =>
    db.pool.query('SELECT ledger.post_group($1, $2, $3::jsonb, $4)', [
      kind,
      asset,
      JSON.stringify(entries),
      key('sql'),
    ]);

  it('accepts amounts as decimal strings or integral JSON numbers, exactly', async () => {
    const huge = (10n ** 70n).toString();
    await expect(
      post([
        { account: treasury, amount: huge },
        { account: obligation, amount: `-${huge}` },
      ]),
    ).resolves.toBeDefined();
    await expect(
      post([
        { account: treasury, amount: 12 },
        { account: obligation, amount: -12 },
      ]),
    ).resolves.toBeDefined();
  });

  it.each([
    [
      'a fractional amount',
      [
        { account: treasury, amount: '1.5' },
        { account: obligation, amount: '-1.5' },
      ],
    ],
    [
      'a leading zero',
      [
        { account: treasury, amount: '01' },
        { account: obligation, amount: '-1' },
      ],
    ],
    [
      'an exponent',
      [
        { account: treasury, amount: '1e3' },
        { account: obligation, amount: '-1000' },
      ],
    ],
    [
      'an unknown field',
      [
        { account: treasury, amount: '1', note: 'x' },
        { account: obligation, amount: '-1' },
      ],
    ],
    ['a single entry', [{ account: treasury, amount: '1' }]],
    [
      'an unknown account kind',
      [
        { account: `EQUITY:${USDT0}:x`, amount: '1' },
        { account: obligation, amount: '-1' },
      ],
    ],
    [
      'a ref with a colon',
      [
        { account: `${treasury}:x`, amount: '1' },
        { account: obligation, amount: '-1' },
      ],
    ],
    ['not an array', { account: treasury, amount: '1' }],
  ])('refuses %s with LG002', async (_case, entries) => {
    await expect(post(entries)).rejects.toMatchObject({ code: 'LG002' });
  });

  it('holds a group to 2..64 entries', async () => {
    const lines = (n: number) => [
      ...Array.from({ length: n - 1 }, () => ({ account: treasury, amount: '1' })),
      { account: obligation, amount: String(-(n - 1)) },
    ];
    await expect(post(lines(64))).resolves.toBeDefined();
    await expect(post(lines(65))).rejects.toMatchObject({ code: 'LG002' });
  });

  it('refuses REVERSAL through post_group, an unknown kind and an unregistered asset', async () => {
    const balanced = [
      { account: treasury, amount: '1' },
      { account: obligation, amount: '-1' },
    ];
    await expect(post(balanced, 'REVERSAL')).rejects.toMatchObject({ code: 'LG002' });
    await expect(post(balanced, 'GIFT')).rejects.toMatchObject({ code: 'LG002' });
    const unknownAsset = 'eip155:1|0x0000000000000000000000000000000000000001';
    const onUnknown = [
      { account: treasuryAccount(unknownAsset), amount: '1' },
      { account: accountId('SUSPENSE', unknownAsset, 'x'), amount: '-1' },
    ];
    await expect(post(onUnknown, 'FUNDING', unknownAsset)).rejects.toMatchObject({
      code: 'LG002',
      message: expect.stringMatching(/not registered/),
    });
  });

  it('registers an asset idempotently and refuses a change of decimals', async () => {
    const again = await db.pool.query<{ asset: string }>(
      "SELECT ledger.register_asset('eip155:196', $1, 'USDT0', 6) AS asset",
      [USDT0.split('|')[1]],
    );
    expect(again.rows[0].asset).toBe(USDT0);
    await expect(
      db.pool.query("SELECT ledger.register_asset('eip155:196', $1, 'USDT0', 18)", [
        USDT0.split('|')[1],
      ]),
    ).rejects.toMatchObject({ code: 'LG005' });
  });

  it('keeps the TypeScript vocabulary equal to the database enums', async () => {
    const enums = await db.pool.query<{ accounts: string; groups: string }>(
      'SELECT enum_range(NULL::ledger.account_kind)::text AS accounts, enum_range(NULL::ledger.group_kind)::text AS groups',
    );
    expect(enums.rows[0]).toEqual({
      accounts: `{${ACCOUNT_KINDS.join(',')}}`,
      groups: `{${GROUP_KINDS.join(',')}}`,
    });
  });
});

describe('opening accounts under concurrency', () => {
  it('never deadlocks when concurrent postings open overlapping sets of new accounts', async () => {
    for (let round = 0; round < 40; round += 1) {
      const fresh = Array.from({ length: 6 }, (_, i) =>
        accountId('SUSPENSE', USDT0, `race-${round}-${i}`),
      );
      const postings = [0, 1, 2, 3, 4, 5].map((n) => {
        // Each posting opens a different overlapping subset, in a different order.
        const picked = fresh.filter((_, i) => (i + n) % 3 !== 0).sort(() => Math.random() - 0.5);
        return postGroup(db.pool, {
          kind: 'SUSPENSE_MOVE',
          asset: USDT0,
          entries: [
            ...picked.map((account) => ({ account, amountAtomic: 5n })),
            { account: obligation, amountAtomic: -5n * BigInt(picked.length) },
          ],
          idempotencyKey: key(`open-${round}-${n}`),
        });
      });
      await expect(Promise.all(postings)).resolves.toHaveLength(6);
    }
  });
});
