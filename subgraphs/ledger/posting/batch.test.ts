// ledger.post_groups (migration 0004) through postGroups: many groups in one call and one
// statement, with every rule of post_group held per group, refused with the same SQLSTATE and
// message, all or nothing, idempotent per key, checked again at COMMIT, and safe under concurrency.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { AppError } from '../../../core/errors';
import { withTransaction } from '../../../platform/db/transaction';
import type { TestDatabase } from '../../../platform/db/testDb';
import { accountId, treasuryAccount } from '../accounts/names';
import { accountBalance } from '../accounts/reads';
import { MAX_GROUPS_PER_BATCH, postGroup, postGroups, type PostGroupInput } from './writes';
import { ledgerErrorFrom } from '../sql';
import { createLedgerTestDatabase, intentId, registerRails, USDC, USDT0 } from '../test-support';

let db: TestDatabase;

beforeAll(async () => {
  db = await createLedgerTestDatabase({ subgraphs: ['ledger'], poolSize: 12 });
  await registerRails(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

const treasury = treasuryAccount(USDT0);
const obligation = (policy: string) => accountId('USER_OBLIGATION', USDT0, policy);

function key(label: string): string {
  return `${label}:${randomBytes(6).toString('hex')}`;
}

function funding(amount: bigint, policy = '7', idempotencyKey = key('batch')): PostGroupInput {
  return {
    kind: 'FUNDING',
    asset: USDT0,
    entries: [
      { account: treasury, amountAtomic: amount },
      { account: obligation(policy), amountAtomic: -amount },
    ],
    idempotencyKey,
    policyId: policy,
    intentRef: intentId(7),
  };
}

async function counts(): Promise<{ groups: number; entries: number; accounts: number }> {
  const result = await db.pool.query<{ groups: string; entries: string; accounts: string }>(
    `SELECT (SELECT count(*) FROM ledger.groups) AS groups, (SELECT count(*) FROM ledger.entries) AS entries,
            (SELECT count(*) FROM ledger.accounts) AS accounts`,
  );
  const row = result.rows[0];
  return {
    groups: Number(row.groups),
    entries: Number(row.entries),
    accounts: Number(row.accounts),
  };
}

describe('posting a batch', () => {
  it('posts every group of a balanced batch and returns the ids in the order given', async () => {
    const before = await counts();
    const treasuryBefore = await accountBalance(db.pool, treasury);
    const inputs = [
      funding(10n, '101'),
      { ...funding(20n, '102'), memo: 'second', intentRef: `0x${'ab'.repeat(32)}` },
      {
        kind: 'RECOGNITION' as const,
        asset: USDC,
        entries: [
          { account: accountId('CROSS_RAIL_CLEARING', USDC, 'eip155-196'), amountAtomic: 7n },
          { account: accountId('PROVIDER_SETTLEMENT', USDC, 'domains.example'), amountAtomic: -3n },
          { account: accountId('PROVIDER_SETTLEMENT', USDC, 'other.example'), amountAtomic: -4n },
        ],
        idempotencyKey: key('recognition'),
      },
    ];
    const ids = await postGroups(db.pool, inputs);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    ids.forEach((id) => expect(id).toMatch(/^lg_[0-9a-f]{24}$/));

    const stored = await db.pool.query<{
      group_id: string;
      kind: string;
      asset: string;
      entry_count: number;
      idempotency_key: string;
      memo: string | null;
      intent_ref: string | null;
      policy_id: string | null;
    }>(
      'SELECT group_id, kind, asset, entry_count, idempotency_key, memo, intent_ref, policy_id FROM ledger.groups WHERE group_id = ANY($1)',
      [ids],
    );
    const byId = new Map(stored.rows.map((row) => [row.group_id, row]));
    expect(byId.get(ids[0])).toMatchObject({
      kind: 'FUNDING',
      asset: USDT0,
      entry_count: 2,
      idempotency_key: inputs[0].idempotencyKey,
      memo: null,
      policy_id: '101',
      intent_ref: intentId(7),
    });
    expect(byId.get(ids[1])).toMatchObject({
      memo: 'second',
      intent_ref: `0x${'ab'.repeat(32)}`,
      policy_id: '102',
    });
    expect(byId.get(ids[2])).toMatchObject({
      kind: 'RECOGNITION',
      asset: USDC,
      entry_count: 3,
      policy_id: null,
      intent_ref: null,
    });

    const entries = await db.pool.query<{
      group_id: string;
      entry_no: number;
      account_id: string;
      amount: string;
    }>(
      'SELECT group_id, entry_no, account_id, amount::text FROM ledger.entries WHERE group_id = $1 ORDER BY entry_no',
      [ids[2]],
    );
    expect(entries.rows.map((row) => [row.entry_no, row.account_id, row.amount])).toEqual([
      [1, accountId('CROSS_RAIL_CLEARING', USDC, 'eip155-196'), '7'],
      [2, accountId('PROVIDER_SETTLEMENT', USDC, 'domains.example'), '-3'],
      [3, accountId('PROVIDER_SETTLEMENT', USDC, 'other.example'), '-4'],
    ]);
    const after = await counts();
    expect(after).toMatchObject({ groups: before.groups + 3, entries: before.entries + 7 });
    // Opened on first use: the two obligations and the three USDC accounts (the float may exist).
    expect(after.accounts - before.accounts).toBeGreaterThanOrEqual(5);
    expect(await accountBalance(db.pool, treasury)).toBe(treasuryBefore + 30n);
    expect(await accountBalance(db.pool, obligation('102'))).toBe(-20n);
  });

  it('keeps amounts exact far beyond 2^64', async () => {
    const huge = 10n ** 70n + 1n;
    const [id] = await postGroups(db.pool, [funding(huge, '103')]);
    const sum = await db.pool.query<{ amount: string }>(
      'SELECT amount::text FROM ledger.entries WHERE group_id = $1 AND entry_no = 1',
      [id],
    );
    expect(sum.rows[0].amount).toBe(huge.toString());
    expect(await accountBalance(db.pool, obligation('103'))).toBe(-huge);
  });

  it('holds a batch to 1..MAX_GROUPS_PER_BATCH groups', async () => {
    const many = Array.from({ length: MAX_GROUPS_PER_BATCH }, (_, i) =>
      funding(BigInt(i + 1), String(1000 + (i % 50))),
    );
    const ids = await postGroups(db.pool, many);
    expect(new Set(ids).size).toBe(MAX_GROUPS_PER_BATCH);
    await expect(postGroups(db.pool, [...many, funding(1n)])).rejects.toMatchObject({
      code: 'LEDGER_GROUP_INVALID',
    });
    await expect(postGroups(db.pool, [])).rejects.toMatchObject({ code: 'LEDGER_GROUP_INVALID' });
  });

  it('needs an explicit EXECUTE grant, like post_group', async () => {
    const privileges = await db.pool.query<{ public_can: boolean }>(
      "SELECT has_function_privilege('public', 'ledger.post_groups(jsonb)', 'EXECUTE') AS public_can",
    );
    expect(privileges.rows[0].public_can).toBe(false);
  });
});

describe('what a batch refuses, all or nothing', () => {
  it('refuses an unbalanced group before writing anything of the batch', async () => {
    const before = await counts();
    const unbalanced: PostGroupInput = {
      ...funding(10n),
      entries: [
        { account: treasury, amountAtomic: 10n },
        { account: obligation('7'), amountAtomic: -9n },
      ],
    };
    const posting = postGroups(db.pool, [funding(5n, '201'), unbalanced, funding(6n, '202')]);
    await expect(posting).rejects.toBeInstanceOf(AppError);
    await expect(posting).rejects.toMatchObject({
      code: 'LEDGER_GROUP_UNBALANCED',
      message: 'entries sum to 1, not 0 (groups[1])',
    });
    expect(await counts()).toEqual(before);
  });

  it('refuses a mixed-asset group (an account of another asset) and nothing of the batch remains', async () => {
    const before = await counts();
    const mixed: PostGroupInput = {
      ...funding(100n),
      entries: [
        { account: treasuryAccount(USDC), amountAtomic: 100n },
        { account: obligation('7'), amountAtomic: -100n },
      ],
    };
    const posting = postGroups(db.pool, [funding(1n, '203'), mixed]);
    await expect(posting).rejects.toMatchObject({
      code: 'LEDGER_GROUP_INVALID',
      message: expect.stringMatching(/is not KIND:.*\(groups\[1\]\)$/),
    });
    expect(await counts()).toEqual(before);
  });

  it('refuses at COMMIT a transaction that posted a batch next to an unbalanced group, and nothing of it remains', async () => {
    const before = await counts();
    const batchKey = key('commit');
    // As the superuser: the service role may not insert into ledger.groups at all.
    const failure = withTransaction(db.adminPool, async (client) => {
      await postGroups(client, [funding(3n, '204', batchKey), funding(4n, '205')]);
      // A group the batch function did not write: two declared entries, one present, unbalanced.
      await client.query(
        "INSERT INTO ledger.groups (group_id, kind, asset, entry_count, idempotency_key) VALUES ($1, 'FUNDING', $2, 2, $3)",
        [`lg_${randomBytes(12).toString('hex')}`, USDT0, key('direct')],
      );
    });
    await expect(failure).rejects.toMatchObject({ code: 'LG001' });
    expect(ledgerErrorFrom(await failure.catch((error) => error))?.code).toBe(
      'LEDGER_GROUP_UNBALANCED',
    );
    expect(await counts()).toEqual(before);
    const kept = await db.pool.query('SELECT 1 FROM ledger.groups WHERE idempotency_key = $1', [
      batchKey,
    ]);
    expect(kept.rowCount).toBe(0);
  });

  it('refuses a non-bigint amount in TypeScript before sending anything', async () => {
    const bad = {
      ...funding(1n),
      entries: [
        { account: treasury, amountAtomic: 1 as unknown as bigint },
        { account: obligation('7'), amountAtomic: -1n },
      ],
    };
    await expect(postGroups(db.pool, [bad])).rejects.toMatchObject({
      code: 'LEDGER_GROUP_INVALID',
      message: expect.stringMatching(/groups\[0\]\.entries\[0\]/),
    });
  });

  it('still refuses UPDATE and DELETE of what a batch wrote', async () => {
    const [id] = await postGroups(db.pool, [funding(8n, '206')]);
    // As the superuser (the service role holds no UPDATE or DELETE grant here): the triggers refuse.
    await expect(
      db.adminPool.query('UPDATE ledger.entries SET amount = amount * 2 WHERE group_id = $1', [id]),
    ).rejects.toMatchObject({ code: 'LG006' });
    await expect(
      db.adminPool.query('DELETE FROM ledger.groups WHERE group_id = $1', [id]),
    ).rejects.toMatchObject({ code: 'LG006' });
  });
});

describe('the same rules and messages as post_group', () => {
  const sqlPostGroup = (
    kind: string,
    asset: string,
    entries: unknown,
    idempotencyKey: string,
    extra: { intent_ref?: string; policy_id?: string; memo?: string } = {},
  ) =>
    db.pool.query('SELECT ledger.post_group($1, $2, $3::jsonb, $4, $5, $6, $7)', [
      kind,
      asset,
      JSON.stringify(entries),
      idempotencyKey,
      extra.intent_ref ?? null,
      extra.policy_id ?? null,
      extra.memo ?? null,
    ]);
  const sqlPostGroups = (groups: unknown) =>
    db.pool.query('SELECT ledger.post_groups($1::jsonb)', [JSON.stringify(groups)]);

  async function refusal(work: Promise<unknown>): Promise<{ code: string; message: string }> {
    try {
      await work;
    } catch (error) {
      const { code, message } = error as { code: string; message: string };
      return { code, message };
    }
    throw new Error('expected a refusal');
  }

  const balanced = [
    { account: treasury, amount: '1' },
    { account: obligation('7'), amount: '-1' },
  ];
  const unknownAsset = 'eip155:1|0x0000000000000000000000000000000000000001';
  const cases: Array<
    [
      string,
      string,
      string,
      unknown,
      string,
      { intent_ref?: string; policy_id?: string; memo?: string }?,
    ]
  > = [
    ['a REVERSAL', 'REVERSAL', USDT0, balanced, 'k-reversal'],
    ['an unknown kind', 'GIFT', USDT0, balanced, 'k-gift'],
    [
      'entries that are not an array',
      'FUNDING',
      USDT0,
      { account: treasury, amount: '1' },
      'k-object',
    ],
    [
      '65 entries',
      'FUNDING',
      USDT0,
      [
        ...Array.from({ length: 64 }, () => ({ account: treasury, amount: '1' })),
        { account: obligation('7'), amount: '-64' },
      ],
      'k-65',
    ],
    ['a single entry', 'FUNDING', USDT0, [{ account: treasury, amount: '1' }], 'k-one'],
    [
      'a fractional amount',
      'FUNDING',
      USDT0,
      [
        { account: treasury, amount: '1.5' },
        { account: obligation('7'), amount: '-1.5' },
      ],
      'k-frac',
    ],
    [
      'a zero amount',
      'FUNDING',
      USDT0,
      [
        { account: treasury, amount: '0' },
        { account: obligation('7'), amount: '0' },
      ],
      'k-zero',
    ],
    [
      'an exponent',
      'FUNDING',
      USDT0,
      [
        { account: treasury, amount: '1' },
        { account: obligation('7'), amount: '-1e0' },
      ],
      'k-exp',
    ],
    [
      'an unknown entry field',
      'FUNDING',
      USDT0,
      [
        { account: treasury, amount: '1', note: 'x' },
        { account: obligation('7'), amount: '-1' },
      ],
      'k-field',
    ],
    [
      'an unknown account kind',
      'FUNDING',
      USDT0,
      [
        { account: `EQUITY:${USDT0}:x`, amount: '1' },
        { account: obligation('7'), amount: '-1' },
      ],
      'k-equity',
    ],
    [
      'a ref with a colon',
      'FUNDING',
      USDT0,
      [
        { account: treasury, amount: '1' },
        { account: `${obligation('7')}:x`, amount: '-1' },
      ],
      'k-colon',
    ],
    [
      'an account of another asset',
      'FUNDING',
      USDT0,
      [
        { account: treasuryAccount(USDC), amount: '1' },
        { account: obligation('7'), amount: '-1' },
      ],
      'k-mixed',
    ],
    [
      'an unbalanced group',
      'FUNDING',
      USDT0,
      [
        { account: treasury, amount: '5' },
        { account: obligation('7'), amount: '-3' },
      ],
      'k-unbalanced',
    ],
    ['a key with a space', 'FUNDING', USDT0, balanced, 'k space'],
    ['an empty key', 'FUNDING', USDT0, balanced, ''],
    ['a key of 201 characters', 'FUNDING', USDT0, balanced, 'k'.repeat(201)],
    ['a bad intent ref', 'FUNDING', USDT0, balanced, 'k-intent', { intent_ref: 'ci_123' }],
    ['a bad policy id', 'FUNDING', USDT0, balanced, 'k-policy', { policy_id: '-7' }],
    ['a memo of 501 characters', 'FUNDING', USDT0, balanced, 'k-memo', { memo: 'm'.repeat(501) }],
    [
      'an unregistered asset',
      'FUNDING',
      unknownAsset,
      [
        { account: treasuryAccount(unknownAsset), amount: '1' },
        { account: accountId('SUSPENSE', unknownAsset, 'x'), amount: '-1' },
      ],
      'k-asset',
    ],
  ];

  it.each(cases)(
    'refuses %s with post_group’s SQLSTATE and message, naming the group',
    async (_case, kind, asset, entries, idempotencyKey, extra = {}) => {
      const single = await refusal(sqlPostGroup(kind, asset, entries, idempotencyKey, extra));
      expect(['LG001', 'LG002']).toContain(single.code);
      const ok = { kind: 'FUNDING', asset: USDT0, entries: balanced, idempotency_key: key('ok') };
      const batch = await refusal(
        sqlPostGroups([ok, { kind, asset, entries, idempotency_key: idempotencyKey, ...extra }]),
      );
      expect(batch).toEqual({ code: single.code, message: `${single.message} (groups[1])` });
      expect(
        (
          await db.pool.query('SELECT 1 FROM ledger.groups WHERE idempotency_key = $1', [
            ok.idempotency_key,
          ])
        ).rowCount,
      ).toBe(0);
    },
  );

  it.each([
    ['not an array', { kind: 'FUNDING' }],
    ['an empty array', []],
    ['a group that is not an object', [1]],
    [
      'a group with an unknown field',
      [{ kind: 'FUNDING', asset: USDT0, entries: balanced, idempotency_key: 'k-extra', note: 'x' }],
    ],
    ['a group without a key', [{ kind: 'FUNDING', asset: USDT0, entries: balanced }]],
    ['a group without a kind', [{ asset: USDT0, entries: balanced, idempotency_key: 'k-nokind' }]],
    [
      'a group without an asset',
      [{ kind: 'FUNDING', entries: balanced, idempotency_key: 'k-noasset' }],
    ],
    [
      'a group without entries',
      [{ kind: 'FUNDING', asset: USDT0, idempotency_key: 'k-noentries' }],
    ],
    [
      'an entry without an account',
      [
        {
          kind: 'FUNDING',
          asset: USDT0,
          entries: [{ amount: '1' }, { account: obligation('7'), amount: '-1' }],
          idempotency_key: 'k-noaccount',
        },
      ],
    ],
    [
      'an entry without an amount',
      [
        {
          kind: 'FUNDING',
          asset: USDT0,
          entries: [{ account: treasury }, { account: obligation('7'), amount: '-1' }],
          idempotency_key: 'k-noamount',
        },
      ],
    ],
    [
      'an entry that is not an object',
      [
        {
          kind: 'FUNDING',
          asset: USDT0,
          entries: ['x', { account: obligation('7'), amount: '-1' }],
          idempotency_key: 'k-string',
        },
      ],
    ],
    [
      'a policy id that is a JSON number',
      [
        {
          kind: 'FUNDING',
          asset: USDT0,
          entries: balanced,
          idempotency_key: 'k-number',
          policy_id: 7,
        },
      ],
    ],
  ])('refuses %s with LG002', async (_case, groups) => {
    await expect(sqlPostGroups(groups)).rejects.toMatchObject({
      code: 'LG002',
      message: expect.stringMatching(/^LEDGER_GROUP_INVALID: /),
    });
  });

  it('accepts amounts as integral JSON numbers and optional fields left out or null', async () => {
    const result = await sqlPostGroups([
      {
        kind: 'FUNDING',
        asset: USDT0,
        entries: [
          { account: treasury, amount: 12 },
          { account: obligation('7'), amount: -12 },
        ],
        idempotency_key: key('numbers'),
      },
      {
        kind: 'FUNDING',
        asset: USDT0,
        entries: balanced,
        idempotency_key: key('nulls'),
        intent_ref: null,
        policy_id: null,
        memo: null,
      },
    ]);
    expect(result.rows[0].post_groups).toHaveLength(2);
  });
});

describe('idempotency in a batch', () => {
  it('returns the first ids for a retried batch without writing, and posts the new groups of a partly retried one', async () => {
    const inputs = [funding(11n, '301'), funding(12n, '302')];
    const first = await postGroups(db.pool, inputs);
    const before = await counts();
    expect(await postGroups(db.pool, inputs)).toEqual(first);
    expect(await postGroups(db.pool, [...inputs].reverse())).toEqual([...first].reverse());
    expect(await counts()).toEqual(before);

    const fresh = funding(13n, '303');
    const mixed = await postGroups(db.pool, [inputs[1], fresh, inputs[0]]);
    expect(mixed[0]).toBe(first[1]);
    expect(mixed[2]).toBe(first[0]);
    expect(first).not.toContain(mixed[1]);
    expect((await counts()).groups).toBe(before.groups + 1);
  });

  it('shares ids between a batch and post_group: a group posted one way is replayed the other', async () => {
    const single = funding(14n, '304');
    const id = await postGroup(db.pool, single);
    expect(await postGroups(db.pool, [single])).toEqual([id]);
    const batched = funding(15n, '305');
    const [batchedId] = await postGroups(db.pool, [batched]);
    expect(await postGroup(db.pool, batched)).toBe(batchedId);
  });

  it('treats the same key twice in one batch as a posting and its retry', async () => {
    const twice = funding(16n, '306');
    const before = await counts();
    const ids = await postGroups(db.pool, [
      twice,
      funding(17n, '307'),
      { ...twice, entries: [...twice.entries].reverse() },
    ]);
    expect(ids[0]).toBe(ids[2]);
    expect((await counts()).groups).toBe(before.groups + 2);
  });

  it('refuses a key reused with another payload, before or within the batch, and writes nothing', async () => {
    const taken = funding(18n, '308');
    await postGroups(db.pool, [taken]);
    const before = await counts();
    await expect(
      postGroups(db.pool, [funding(1n, '309'), { ...taken, memo: 'changed' }]),
    ).rejects.toMatchObject({ code: 'LEDGER_IDEMPOTENCY_CONFLICT' });
    const repeated = funding(19n, '310');
    await expect(
      postGroups(db.pool, [
        repeated,
        {
          ...repeated,
          entries: [
            { account: treasury, amountAtomic: 20n },
            { account: obligation('310'), amountAtomic: -20n },
          ],
        },
      ]),
    ).rejects.toMatchObject({
      code: 'LEDGER_IDEMPOTENCY_CONFLICT',
    });
    expect(await counts()).toEqual(before);
  });
});

describe('concurrency', () => {
  it('posts each key once when many connections post overlapping batches in different orders, opening the same new accounts', async () => {
    for (let round = 0; round < 10; round += 1) {
      const shared = Array.from({ length: 12 }, (_, i) => ({
        kind: 'SUSPENSE_MOVE' as const,
        asset: USDT0,
        entries: [
          { account: accountId('SUSPENSE', USDT0, `batch-${round}-${i % 5}`), amountAtomic: 5n },
          {
            account: accountId('SUSPENSE', USDT0, `batch-${round}-${(i + 1) % 5}`),
            amountAtomic: -5n,
          },
        ],
        idempotencyKey: `concurrent:${round}:${i}:${randomBytes(2).toString('hex')}`,
      }));
      const batches = Array.from({ length: 8 }, (_, n) =>
        shared.filter((_, i) => (i + n) % 3 !== 0).sort(() => Math.random() - 0.5),
      );
      const results = await Promise.all(batches.map((batch) => postGroups(db.pool, batch)));
      const idByKey = new Map<string, string>();
      results.forEach((ids, n) =>
        ids.forEach((id, i) => {
          const k = batches[n][i].idempotencyKey;
          expect(idByKey.get(k) ?? id).toBe(id);
          idByKey.set(k, id);
        }),
      );
      const stored = await db.pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM ledger.groups WHERE idempotency_key = ANY($1)',
        [shared.map((g) => g.idempotencyKey)],
      );
      expect(Number(stored.rows[0].n)).toBe(idByKey.size);
    }
  });
});

describe('property', () => {
  it('leaves every asset at zero and every account at the sum a model computes, whatever valid batches are posted', async () => {
    const model = new Map<string, bigint>();
    const refs = ['float', '7', 'p1', 'p2'] as const;
    const kinds = ['TREASURY', 'USER_OBLIGATION', 'FEE_REVENUE', 'SUSPENSE'] as const;
    const group = fc
      .record({
        asset: fc.constantFrom(USDT0, USDC),
        lines: fc.array(
          fc.record({
            kind: fc.constantFrom(...kinds),
            ref: fc.constantFrom(...refs),
            amount: fc.bigInt({ min: 1n, max: 10n ** 30n }),
            negative: fc.boolean(),
          }),
          { minLength: 1, maxLength: 5 },
        ),
      })
      .map(({ asset, lines }) => {
        const entries = lines.map((line) => ({
          account: accountId(line.kind, asset, `prop-${line.ref}`),
          amountAtomic: line.negative ? -line.amount : line.amount,
        }));
        const sum = entries.reduce((total, entry) => total + entry.amountAtomic, 0n);
        entries.push(
          sum === 0n
            ? { account: accountId('SUSPENSE', asset, 'prop-zero'), amountAtomic: 1n }
            : { account: accountId('SUSPENSE', asset, 'prop-balance'), amountAtomic: -sum },
        );
        if (sum === 0n)
          entries.push({
            account: accountId('SUSPENSE', asset, 'prop-balance'),
            amountAtomic: -1n,
          });
        return { kind: 'SUSPENSE_MOVE' as const, asset, entries, idempotencyKey: key('prop') };
      });
    await fc.assert(
      fc.asyncProperty(fc.array(group, { minLength: 1, maxLength: 20 }), async (groups) => {
        await postGroups(db.pool, groups);
        for (const g of groups)
          for (const entry of g.entries)
            model.set(entry.account, (model.get(entry.account) ?? 0n) + entry.amountAtomic);
      }),
      { numRuns: 25 },
    );
    for (const [account, balance] of model)
      expect(await accountBalance(db.pool, account)).toBe(balance);
    const trial = await db.pool.query<{ net: string }>(
      'SELECT net::text FROM ledger.trial_balance',
    );
    trial.rows.forEach((row) => expect(row.net).toBe('0'));
  });
});
