import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';
import { silentLogger } from '../../platform/log';
import { PgNotifyBridge } from './pgBridge';

async function waitFor<T>(read: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('PgNotifyBridge', () => {
  let db: TestDatabase;
  let bridge: PgNotifyBridge;
  const received: Array<{ channel: string; payload: unknown }> = [];
  let resyncs = 0;

  beforeAll(async () => {
    db = await createTestDatabase({ subgraphs: [] });
    bridge = new PgNotifyBridge({
      connectionString: db.url,
      channels: ['catalog_changed'],
      onNotification: (channel, payload) => received.push({ channel, payload }),
      onResync: () => {
        resyncs += 1;
      },
      log: silentLogger,
    });
    await bridge.start();
  });

  afterAll(async () => {
    await bridge.stop();
    await db.drop();
  });

  it('delivers a NOTIFY sent inside a committed transaction, parsed as JSON', async () => {
    await db.pool.query(
      `SELECT pg_notify('catalog_changed', '{"id":"domains.check","maturity":"verified"}')`,
    );
    const event = await waitFor(() =>
      received.find((r) => (r.payload as { id?: string }).id === 'domains.check'),
    );
    expect(event).toEqual({
      channel: 'catalog_changed',
      payload: { id: 'domains.check', maturity: 'verified' },
    });
  });

  it('never delivers a NOTIFY from a rolled-back transaction', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT pg_notify('catalog_changed', '{"id":"rolled-back"}')`);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    await db.pool.query(`SELECT pg_notify('catalog_changed', '{"id":"after-rollback"}')`);
    await waitFor(() =>
      received.find((r) => (r.payload as { id?: string }).id === 'after-rollback'),
    );
    expect(received.some((r) => (r.payload as { id?: string }).id === 'rolled-back')).toBe(false);
  });

  it('reconnects after its backend is terminated, signals a resync, and delivers later events', async () => {
    await db.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gateway-listen' AND datname = current_database()`,
    );
    await waitFor(() => (resyncs > 0 && bridge.connected ? true : undefined), 10_000);
    await db.pool.query(`SELECT pg_notify('catalog_changed', '{"id":"after-reconnect"}')`);
    await waitFor(() =>
      received.find((r) => (r.payload as { id?: string }).id === 'after-reconnect'),
    );
    expect(resyncs).toBe(1);
  });
});
