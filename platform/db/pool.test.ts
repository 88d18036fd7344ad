// The pool and the TypeORM DataSource against a real PostgreSQL: session limits arrive on every
// connection, a dropped idle connection is reported instead of crashing, and TypeORM reads and
// writes the tables our SQL made without ever creating or altering one itself.
import { EntitySchema } from 'typeorm';
import { createDataSource } from './dataSource';
import { createPool } from './pool';
import { createTestDatabase, type TestDatabase } from './testDb';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ subgraphs: [] });
});

afterAll(async () => {
  await db.drop();
});

test('every pooled connection carries the statement and idle-transaction timeouts and its name', async () => {
  const pool = createPool(db.url, { max: 2, applicationName: 'pool-test' });
  try {
    const { rows } = await pool.query(
      "SELECT current_setting('statement_timeout') AS st, current_setting('idle_in_transaction_session_timeout') AS it, current_setting('application_name') AS app",
    );
    expect(rows).toEqual([{ st: '30s', it: '1min', app: 'pool-test' }]);
  } finally {
    await pool.end();
  }
});

test('an idle connection killed by the server is reported and the pool keeps working', async () => {
  const errors: Error[] = [];
  const pool = createPool(db.url, {
    max: 1,
    applicationName: 'pool-victim',
    onIdleError: (error) => errors.push(error),
  });
  try {
    await pool.query('SELECT 1');
    const killer = createPool(db.url, { max: 1 });
    await killer.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pool-victim'",
    );
    await killer.end();
    const deadline = Date.now() + 5000;
    while (errors.length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));

    expect(errors).toHaveLength(1);
    expect((await pool.query('SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
  } finally {
    await pool.end();
  }
});

interface Note {
  id: number;
  body: string;
}

const NoteEntity = new EntitySchema<Note>({
  name: 'Note',
  tableName: 'notes',
  columns: { id: { type: Number, primary: true }, body: { type: String } },
});

const MissingEntity = new EntitySchema<Note>({
  name: 'Missing',
  tableName: 'never_created',
  columns: { id: { type: Number, primary: true }, body: { type: String } },
});

test('the DataSource uses tables made by SQL and never synchronises the schema', async () => {
  // Made as migrations make tables; the DataSource connects as the service role, like the service.
  await db.adminPool.query(
    'CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL); GRANT SELECT, INSERT ON notes TO spend_control_service',
  );
  const dataSource = createDataSource(db.url, [NoteEntity, MissingEntity], {
    applicationName: 'typeorm-test',
  });
  await dataSource.initialize();
  try {
    const notes = dataSource.getRepository(NoteEntity);
    await notes.insert({ id: 1, body: 'written by typeorm' });
    expect(await notes.findOneBy({ id: 1 })).toEqual({ id: 1, body: 'written by typeorm' });

    const { rows } = await db.pool.query("SELECT to_regclass('never_created') AS t");
    expect(rows).toEqual([{ t: null }]);
    const settings = await dataSource.query("SELECT current_setting('statement_timeout') AS st");
    expect(settings).toEqual([{ st: '30s' }]);
  } finally {
    await dataSource.destroy();
  }
  expect(dataSource.isInitialized).toBe(false);
});
