// Test databases copied from a template migrated once per run (platform/db/testDb.ts): a copy holds
// exactly what migrating the database itself gives (the same migrations, relations, routines,
// triggers firing ALWAYS, and grants), it is reached by its own logins like any other, and the
// run's templates go at its end.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import {
  createTestDatabase,
  dropTemplates,
  serverUrl,
  TEMPLATE_RUN_ENV,
  type TestDatabase,
  withDatabase,
} from './testDb';

/** What a database holds of the schema, as text to compare. */
async function shapeOf(db: TestDatabase): Promise<Record<string, unknown>> {
  const query = async (sql: string) =>
    (await db.adminPool.query<{ v: unknown }>(sql)).rows.map((row) => row.v);
  return {
    migrations: await query(
      "SELECT subgraph || '/' || version || '/' || checksum AS v FROM public.schema_migrations ORDER BY 1",
    ),
    relations: await query(
      `SELECT n.nspname || '.' || c.relname || ':' || c.relkind::text || ':' || coalesce(array_to_string(c.relacl, ','), '') AS v
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') ORDER BY 1`,
    ),
    routines: await query(
      `SELECT p.oid::regprocedure::text || ':' || md5(p.prosrc) AS v
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
    ),
    triggers: await query(
      `SELECT t.tgrelid::regclass::text || '.' || t.tgname || ':' || t.tgenabled::text AS v
         FROM pg_trigger t WHERE NOT t.tgisinternal ORDER BY 1`,
    ),
  };
}

test("a database copied from the run's template holds what migrating it gives, and the templates go at the end", async () => {
  const saved = process.env[TEMPLATE_RUN_ENV];
  const run = randomBytes(6).toString('hex');
  const databases: TestDatabase[] = [];
  try {
    process.env[TEMPLATE_RUN_ENV] = run;
    const copied = await createTestDatabase({ subgraphs: ['policy', 'intent'] });
    databases.push(copied);
    const copiedAgain = await createTestDatabase({ subgraphs: ['policy', 'intent'] });
    databases.push(copiedAgain);
    delete process.env[TEMPLATE_RUN_ENV];
    const migrated = await createTestDatabase({ subgraphs: ['policy', 'intent'] });
    databases.push(migrated);

    const expected = await shapeOf(migrated);
    expect((expected.migrations as string[]).length).toBeGreaterThan(10);
    expect(await shapeOf(copied)).toEqual(expected);
    expect(await shapeOf(copiedAgain)).toEqual(expected);
    // Each copy is its own database, used through its own service login.
    await copied.pool.query("SELECT 1 FROM intent.decisions WHERE policy_id = '1'");
    expect(copied.name).not.toBe(copiedAgain.name);

    const admin = new Client({ connectionString: serverUrl() });
    await admin.connect();
    try {
      const templates = async () =>
        (
          await admin.query<{ name: string }>(
            'SELECT datname AS name FROM pg_database WHERE datname LIKE $1',
            [`sc\\_template\\_${run}\\_%`],
          )
        ).rows.map((row) => row.name);
      // One template for the one set of subgraphs, taking no connections.
      expect(await templates()).toHaveLength(1);
      const template = new Client({
        connectionString: withDatabase(serverUrl(), (await templates())[0]!),
      });
      template.on('error', () => undefined);
      await expect(template.connect()).rejects.toThrow(/not currently accepting connections/);
      await dropTemplates(serverUrl(), run);
      expect(await templates()).toEqual([]);
    } finally {
      await admin.end();
    }
  } finally {
    if (saved === undefined) delete process.env[TEMPLATE_RUN_ENV];
    else process.env[TEMPLATE_RUN_ENV] = saved;
    for (const db of databases) await db.drop();
    await dropTemplates(serverUrl(), run);
  }
});
