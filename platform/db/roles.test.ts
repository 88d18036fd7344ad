// The database roles, attacked as the service itself: connected as the service role's login (what
// every subgraph, the gateway and the worker run as), no statement switches a guard off, rewrites
// the ledger or the audits, or changes the schema; the guards fire ALWAYS even for a superuser in
// replica mode; migrations to come grant the service what it needs; role setup is race-safe.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Pool } from 'pg';
import {
  accountBalance,
  accountId,
  claimPayment,
  paymentClaimFor,
  postFunding,
  postGroup,
  recordAnswer,
  recordSettled,
  registerRails,
  treasuryAccount,
  USDT0,
} from '../../subgraphs/ledger/test-support';
import { migrate, readMigrations, SUBGRAPH_NAMES } from './migrate';
import { ensureGroupRoles, OWNER_ROLE, serviceRoleProblems } from './roles';
import { createTestDatabase, serverUrl, type TestDatabase } from './testDb';

let db: TestDatabase;
let paymentId: string;
const treasury = treasuryAccount(USDT0);

async function sqlstateOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    return (error as { code?: string }).code ?? 'no sqlstate';
  }
  return 'succeeded';
}

/** An ANSWERED x402 payment with its fee booked, made the way the paywall makes it. */
async function answeredPayment(): Promise<string> {
  const claim = paymentClaimFor();

  const { payment } = await claimPayment(db.pool, claim, 30_000);
  const settled = await recordSettled(db.pool, payment, `0x${'ab'.repeat(32)}`);
  await recordAnswer(db.pool, settled.paymentId, 200, { ok: true });
  return settled.paymentId;
}

beforeAll(async () => {
  db = await createTestDatabase();
  await registerRails(db.pool);
  await postFunding(db.pool, {
    asset: USDT0,
    amountAtomic: 500n,
    policyId: '7',
    intentRef: `ci_${'0'.repeat(23)}1`,
    idempotencyKey: 'roles:funding',
  });
  paymentId = await answeredPayment();
});

afterAll(async () => {
  await db?.drop();
});

describe('connected as the service role', () => {
  const refusedByPrivilege = [
    // Switching the guards off.
    'ALTER TABLE ledger.entries DISABLE TRIGGER ALL',
    'ALTER TABLE ledger.groups DISABLE TRIGGER groups_append_only',
    'ALTER TABLE ledger.service_payments DISABLE TRIGGER service_payments_transition',
    'ALTER TABLE ledger.service_payments DISABLE TRIGGER service_payments_delete',
    'ALTER TABLE intent.reservations DISABLE TRIGGER reservations_guard',
    'SET session_replication_role = replica',
    `SET ROLE ${OWNER_ROLE}`,
    `SET SESSION AUTHORIZATION ${OWNER_ROLE}`,
    // Rewriting the ledger, its audit and the budget's arithmetic.
    'UPDATE ledger.entries SET amount = amount * 2',
    'DELETE FROM ledger.entries',
    // Balances are read through the checkpoint: only its functions write it.
    'UPDATE ledger.account_checkpoints SET balance = balance + 1',
    "INSERT INTO ledger.asset_checkpoints (asset, debits, credits, entry_count) VALUES ('x', 0, 0, 1)",
    'UPDATE ledger.balance_checkpoint SET through_seq = through_seq + 1000',
    'UPDATE ledger.checkpoint_horizon SET seq = seq + 1000',
    'DELETE FROM ledger.account_checkpoints',
    "UPDATE ledger.groups SET memo = 'edited'",
    'DELETE FROM ledger.groups',
    'TRUNCATE ledger.entries',
    'TRUNCATE ledger.groups CASCADE',
    'TRUNCATE ledger.service_payments',
    "INSERT INTO ledger.groups (group_id, kind, asset, entry_count, idempotency_key) VALUES ('lg_000000000000000000000001', 'FUNDING', 'x', 2, 'k')",
    "UPDATE ledger.operator_actions SET actor = 'someone else'",
    "SELECT ledger.write_group('FUNDING', 'x', ARRAY['a', 'b'], ARRAY[1, -1]::numeric[], 'k', NULL, NULL, NULL, NULL)",
    'UPDATE intent.policy_day_totals SET active = 0',
    'DELETE FROM intent.policy_call_minutes',
    'DELETE FROM intent.decisions',
    "UPDATE policy.policy_changes SET actor = 'someone else'",
    'DELETE FROM policy.escalation_events',
    'DELETE FROM policy.escalations',
    // Changing the schema, the functions and the grants.
    'DROP TABLE ledger.entries',
    'DROP TRIGGER entries_append_only ON ledger.entries',
    'DROP FUNCTION ledger.reject_mutation()',
    'CREATE OR REPLACE FUNCTION ledger.reject_mutation() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$',
    'ALTER FUNCTION ledger.post_group(text, text, jsonb, text, text, text, text) SECURITY INVOKER',
    'ALTER FUNCTION ledger.post_group(text, text, jsonb, text, text, text, text) RESET search_path',
    'CREATE TABLE ledger.shadow (x int)',
    'CREATE FUNCTION ledger.shadow() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$',
    'CREATE TRIGGER shadow BEFORE INSERT ON ledger.service_payments FOR EACH ROW EXECUTE FUNCTION ledger.reject_mutation()',
    'CREATE SCHEMA shadow',
    'CREATE TABLE public.shadow (x int)',
    'ALTER TABLE ledger.entries OWNER TO CURRENT_USER',
    `ALTER DEFAULT PRIVILEGES FOR ROLE ${OWNER_ROLE} GRANT UPDATE ON TABLES TO PUBLIC`,
    "COMMENT ON TABLE ledger.entries IS 'mine'",
  ];

  it.each(refusedByPrivilege)('is refused (42501): %s', async (statement) => {
    expect(await sqlstateOf(db.pool.query(statement))).toBe('42501');
  });

  it('cannot move an x402 payment backwards, rewrite it or delete it once paid: the guards still fire (LG006)', async () => {
    for (const statement of [
      "UPDATE ledger.service_payments SET state = 'SETTLING', lease_until = now() WHERE payment_id = $1",
      'UPDATE ledger.service_payments SET amount = amount + 1 WHERE payment_id = $1',
      'UPDATE ledger.service_payments SET tx_hash = NULL WHERE payment_id = $1',
      'DELETE FROM ledger.service_payments WHERE payment_id = $1',
    ]) {
      expect({
        statement,
        sqlstate: await sqlstateOf(db.pool.query(statement, [paymentId])),
      }).toEqual({ statement, sqlstate: 'LG006' });
    }
    const { rows } = await db.pool.query(
      'SELECT state FROM ledger.service_payments WHERE payment_id = $1',
      [paymentId],
    );
    expect(rows).toEqual([{ state: 'ANSWERED' }]);
  });

  it('still posts through the functions it is granted, and the ledger kept every entry', async () => {
    const before = await accountBalance(db.pool, treasury);
    await postGroup(db.pool, {
      kind: 'FUNDING',
      asset: USDT0,
      entries: [
        { account: treasury, amountAtomic: 3n },
        { account: accountId('USER_OBLIGATION', USDT0, '7'), amountAtomic: -3n },
      ],
      idempotencyKey: 'roles:after-attacks',
    });
    expect(before).toBe(500n);
    expect(await accountBalance(db.pool, treasury)).toBe(503n);
  });

  it('owns nothing and is no superuser, which the start-up check confirms; the owner and the admin fail it', async () => {
    expect(await serviceRoleProblems(db.pool)).toEqual([]);
    const owner = new Pool({ connectionString: db.ownerUrl, max: 1 });
    try {
      expect(await serviceRoleProblems(owner)).toEqual([
        expect.stringMatching(/owns \(or may act as the owner of\) schema /),
      ]);
    } finally {
      await owner.end();
    }
    expect(await serviceRoleProblems(db.adminPool)).toContainEqual(
      expect.stringMatching(/is a superuser$/),
    );
  });
});

describe('the schema as the owner left it', () => {
  it('has every trigger of the app schemas firing ALWAYS', async () => {
    const { rows } = await db.adminPool.query<{ trigger: string; enabled: string }>(
      `SELECT c.oid::regclass || '.' || t.tgname AS trigger, t.tgenabled AS enabled
         FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE NOT t.tgisinternal AND n.nspname = ANY ($1) ORDER BY 1`,
      [SUBGRAPH_NAMES],
    );
    expect(rows.map((row) => row.trigger)).toEqual(
      expect.arrayContaining([
        'ledger.entries.entries_append_only',
        'ledger.service_payments.service_payments_delete',
        'intent.reservations.reservations_guard',
        'policy.escalation_events.escalation_events_append_only',
      ]),
    );
    expect(rows.filter((row) => row.enabled !== 'A')).toEqual([]);
  });

  it('so a superuser in replica mode is refused by the guards too', async () => {
    await db.adminPool.query(
      "INSERT INTO policy.policy_changes (policy_id, version, change, actor, at) VALUES (1, 1, 'CREATED', 'test', now())",
    );
    const client = await db.adminPool.connect();
    try {
      await client.query('SET session_replication_role = replica');
      expect(
        await sqlstateOf(
          client.query('DELETE FROM ledger.service_payments WHERE payment_id = $1', [paymentId]),
        ),
      ).toBe('LG006');
      expect(
        await sqlstateOf(
          client.query(
            "UPDATE ledger.service_payments SET state = 'FAILED' WHERE payment_id = $1",
            [paymentId],
          ),
        ),
      ).toBe('LG006');
      expect(await sqlstateOf(client.query("UPDATE policy.policy_changes SET actor = 'x'"))).toBe(
        'P0001',
      );
      expect(await sqlstateOf(client.query('DELETE FROM ledger.entries'))).toBe('LG006');
    } finally {
      await client.query('RESET session_replication_role');
      client.release();
    }
  });

  it('has every SECURITY DEFINER function owned by the owner role with its search_path pinned', async () => {
    const { rows } = await db.adminPool.query<{
      fn: string;
      owner: string;
      config: string[] | null;
    }>(
      `SELECT p.oid::regprocedure::text AS fn, pg_get_userbyid(p.proowner) AS owner, p.proconfig AS config
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE p.prosecdef AND n.nspname = ANY ($1) ORDER BY 1`,
      [SUBGRAPH_NAMES],
    );
    expect(rows.map((row) => row.fn)).toEqual(
      expect.arrayContaining([
        'ledger.post_group(text,text,jsonb,text,text,text,text)',
        'intent.count_reservation()',
      ]),
    );
    for (const row of rows) {
      expect({
        fn: row.fn,
        owner: row.owner,
        searchPath: row.config?.find((setting) => setting.startsWith('search_path=')),
      }).toEqual({
        fn: row.fn,
        owner: OWNER_ROLE,
        searchPath: 'search_path=pg_catalog, pg_temp',
      });
    }
  });
});

describe('a migration to come', () => {
  let rootDir: string;

  beforeAll(() => {
    rootDir = mkdtempSync(path.join(os.tmpdir(), 'roles-migrations-'));
    const dir = path.join(rootDir, 'builder', 'migrations');
    mkdirSync(dir, { recursive: true });
    // What a colleague's migration looks like: a new schema, a table, a guard and a locked-down function.
    writeFileSync(
      path.join(dir, '0001_buckets.sql'),
      `CREATE SCHEMA buckets;
       CREATE TABLE buckets.tokens (id serial PRIMARY KEY, client text NOT NULL, tokens integer NOT NULL);
       CREATE FUNCTION buckets.refuse_negative() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN IF NEW.tokens < 0 THEN RAISE EXCEPTION 'negative' USING ERRCODE = 'BK001'; END IF; RETURN NEW; END $$;
       CREATE TRIGGER tokens_guard BEFORE INSERT OR UPDATE ON buckets.tokens FOR EACH ROW EXECUTE FUNCTION buckets.refuse_negative();
       CREATE FUNCTION buckets.total() RETURNS bigint LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
         AS $$ SELECT coalesce(sum(tokens), 0) FROM buckets.tokens $$;
       REVOKE ALL ON FUNCTION buckets.total() FROM PUBLIC;`,
    );
  });

  afterAll(() => {
    rmSync(rootDir, { recursive: true, force: true });
  });

  it('gets the service its grants by default, and nothing that would let it bypass the new guard', async () => {
    const owner = new Pool({ connectionString: db.ownerUrl, max: 1 });
    try {
      await migrate(owner, { subgraphs: ['builder'], rootDir });
    } finally {
      await owner.end();
    }
    await db.pool.query("INSERT INTO buckets.tokens (client, tokens) VALUES ('a', 5), ('b', 7)");
    await db.pool.query("UPDATE buckets.tokens SET tokens = tokens - 1 WHERE client = 'a'");
    await db.pool.query("DELETE FROM buckets.tokens WHERE client = 'b'");
    expect((await db.pool.query('SELECT buckets.total()::int AS total')).rows).toEqual([
      { total: 4 },
    ]);
    expect(
      await sqlstateOf(db.pool.query("UPDATE buckets.tokens SET tokens = -1 WHERE client = 'a'")),
    ).toBe('BK001');
    for (const statement of [
      'ALTER TABLE buckets.tokens DISABLE TRIGGER tokens_guard',
      'TRUNCATE buckets.tokens',
      'DROP TABLE buckets.tokens',
      'CREATE TABLE buckets.more (x int)',
    ]) {
      expect({ statement, sqlstate: await sqlstateOf(db.pool.query(statement)) }).toEqual({
        statement,
        sqlstate: '42501',
      });
    }
    const trigger = await db.adminPool.query(
      "SELECT tgenabled FROM pg_trigger WHERE tgname = 'tokens_guard'",
    );
    expect(trigger.rows).toEqual([{ tgenabled: 'A' }]);
  });
});

describe('role setup', () => {
  it('is safe when several processes create the roles and databases at once, and drop() removes the logins it made', async () => {
    const clients = Array.from({ length: 6 }, () => new Client({ connectionString: serverUrl() }));
    await Promise.all(clients.map((client) => client.connect()));
    try {
      await Promise.all(clients.map((client) => ensureGroupRoles(client)));
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
    const databases = await Promise.all(
      Array.from({ length: 3 }, () => createTestDatabase({ subgraphs: ['catalog'] })),
    );
    const logins = databases.flatMap((database) => [
      database.logins.owner,
      database.logins.service,
    ]);
    for (const database of databases) {
      expect(
        (await database.pool.query('SELECT count(*)::int AS n FROM catalog.providers')).rows,
      ).toEqual([{ n: 5 }]);
      await database.drop();
    }
    const left = await db.adminPool.query('SELECT rolname FROM pg_roles WHERE rolname = ANY ($1)', [
      logins,
    ]);
    expect(left.rows).toEqual([]);
  });

  it('adopts a database an earlier version migrated as a superuser, then migrates on as the owner', async () => {
    const old = await createTestDatabase({ subgraphs: [] });
    try {
      // What the service did before the roles existed: every migration up to the grants, as the superuser.
      await old.adminPool.query(
        `CREATE TABLE public.schema_migrations (subgraph text NOT NULL, version integer NOT NULL, name text NOT NULL,
           checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (subgraph, version))`,
      );
      for (const subgraph of SUBGRAPH_NAMES) {
        const migrations = readMigrations(subgraph);
        const before = migrations.slice(
          0,
          Math.max(
            0,
            migrations.findIndex((migration) => migration.name === 'service_role'),
          ),
        );
        for (const migration of before) {
          await old.adminPool.query(migration.sql);
          await old.adminPool.query(
            'INSERT INTO public.schema_migrations (subgraph, version, name, checksum) VALUES ($1, $2, $3, $4)',
            [subgraph, migration.version, migration.name, migration.checksum],
          );
        }
      }
      const result = await migrate(old.adminPool);
      expect(
        result.applied
          .filter((migration) => migration.name === 'service_role')
          .map((migration) => migration.subgraph)
          .sort(),
      ).toEqual(['catalog', 'intent', 'ledger', 'policy']);
      const strangers = await old.adminPool.query(
        `SELECT 'relation ' || c.oid::regclass AS object FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE (n.nspname = ANY ($1) OR c.oid = 'public.schema_migrations'::regclass) AND c.relowner <> $2::regrole
         UNION ALL
         SELECT 'function ' || p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = ANY ($1) AND p.proowner <> $2::regrole
         UNION ALL
         SELECT 'type ' || t.oid::regtype FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
          WHERE n.nspname = ANY ($1) AND t.typowner <> $2::regrole
         UNION ALL
         SELECT 'schema ' || n.nspname FROM pg_namespace n WHERE n.nspname = ANY ($1) AND n.nspowner <> $2::regrole`,
        [SUBGRAPH_NAMES, OWNER_ROLE],
      );
      expect(strangers.rows).toEqual([]);
      await registerRails(old.pool);
      await postFunding(old.pool, {
        asset: USDT0,
        amountAtomic: 5n,
        policyId: '7',
        intentRef: `ci_${'0'.repeat(23)}2`,
        idempotencyKey: 'adopted:funding',
      });
      await old.pool.query(
        "UPDATE catalog.providers SET maturity = 'sandbox', updated_at = now() WHERE id = 'spendctl-gifts'",
      );
      expect(await serviceRoleProblems(old.pool)).toEqual([]);
      expect(
        await sqlstateOf(old.pool.query('ALTER TABLE ledger.entries DISABLE TRIGGER ALL')),
      ).toBe('42501');
    } finally {
      await old.drop();
    }
  });
});
