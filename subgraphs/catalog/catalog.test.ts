import { randomBytes } from 'node:crypto';
import type { ApolloServer } from '@apollo/server';
import { Client, type Notification } from 'pg';
import type { DataSource } from 'typeorm';
import { type Actor, signActor } from '../../platform/actor';
import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';
import { createSubgraphServer, executeInProcess, type SubgraphContext } from '../kit';
import { openSubgraphDataSource } from '../registry';
import { readCatalog as readCatalogRows } from './reads';
import { catalogSubgraph } from './subgraph';

const SECRET = randomBytes(32);
const NOW = new Date('2026-11-22T10:00:00.000Z');
const ADMIN: Actor = { kind: 'admin' };
const OWNER: Actor = { kind: 'owner', address: `0x${'ab'.repeat(20)}` };

let db: TestDatabase;
let dataSource: DataSource;
let server: ApolloServer<SubgraphContext>;

beforeAll(async () => {
  db = await createTestDatabase({ subgraphs: ['catalog'] });
  dataSource = await openSubgraphDataSource(db.url, 'catalog-test');
  server = await createSubgraphServer(catalogSubgraph, {
    db: db.pool,
    dataSource,
    actorSecret: SECRET,
    now: () => NOW,
  });
});

afterAll(async () => {
  await server?.stop();
  await dataSource?.destroy();
  await db?.drop();
});

/** Puts every maturity back to the seeded value and clears the audit trail (as the admin: the service may not). */
beforeEach(async () => {
  await db.adminPool.query(`
    UPDATE catalog.providers p SET maturity = seed.maturity FROM (VALUES
      ('spendctl-domains', 'verified'), ('spendctl-travel', 'sandbox'), ('spendctl-email', 'sandbox'),
      ('spendctl-shopping', 'experimental'), ('spendctl-gifts', 'experimental')) AS seed (id, maturity)
    WHERE p.id = seed.id AND p.maturity <> seed.maturity;
    UPDATE catalog.capabilities c SET maturity = seed.maturity FROM (VALUES
      ('domains.check', 'verified'), ('domains.quote', 'sandbox'), ('domains.register', 'sandbox'),
      ('domains.renew', 'sandbox'), ('domains.dns', 'experimental'), ('travel.search', 'sandbox'),
      ('travel.compare', 'sandbox'), ('notify.*', 'sandbox'), ('shop.*', 'experimental'),
      ('gifts.*', 'experimental')) AS seed (id, maturity)
    WHERE c.id = seed.id AND c.maturity <> seed.maturity;
    DELETE FROM catalog.maturity_changes;`);
});

async function run(query: string, variables: Record<string, unknown> = {}, actor?: Actor) {
  const actorHeader = actor === undefined ? undefined : signActor(actor, SECRET, NOW.getTime());
  return executeInProcess(server, { query, variables }, { actorHeader });
}

const CATALOG = `query {
  catalog {
    providers { id name kind maturity executableToday capabilities { id } }
    capabilities { id provider { id } maturity effectiveMaturity movesMoney gateCode refusalCode executable }
    gatedRails { rail refusalCode }
    execution { providersExecutableToday }
    maturityOrder
  }
}`;

type CatalogData = {
  catalog: {
    providers: Array<{
      id: string;
      maturity: string;
      executableToday: boolean;
      capabilities: Array<{ id: string }>;
    }>;
    capabilities: Array<{
      id: string;
      provider: { id: string };
      maturity: string;
      effectiveMaturity: string;
      movesMoney: boolean;
      gateCode: string | null;
      refusalCode: string | null;
      executable: boolean;
    }>;
    gatedRails: Array<{ rail: string; refusalCode: string }>;
    execution: { providersExecutableToday: string[] };
    maturityOrder: string[];
  };
};

async function readCatalog(): Promise<CatalogData['catalog']> {
  const result = await run(CATALOG);
  expect(result.errors).toBeUndefined();
  return (result.data as CatalogData).catalog;
}

const SET_PROVIDER = `mutation ($id: ID!, $maturity: Maturity!, $reason: String!) {
  setProviderMaturity(id: $id, maturity: $maturity, reason: $reason) { id maturity executableToday }
}`;
const SET_CAPABILITY = `mutation ($id: ID!, $maturity: Maturity!, $reason: String!) {
  setCapabilityMaturity(id: $id, maturity: $maturity, reason: $reason) {
    id maturity effectiveMaturity refusalCode executable provider { id executableToday }
  }
}`;

async function auditRows() {
  const result = await db.pool.query(
    'SELECT subject_kind, subject_id, from_maturity, to_maturity, reason, actor, changed_at FROM catalog.maturity_changes ORDER BY id',
  );
  return result.rows;
}

describe('catalog reads (anonymous)', () => {
  test('serves the seeded catalog: five providers with their maturities and the gated rails', async () => {
    const catalog = await readCatalog();
    expect(catalog.providers.map((p) => [p.id, p.maturity])).toEqual([
      ['spendctl-domains', 'VERIFIED'],
      ['spendctl-email', 'SANDBOX'],
      ['spendctl-gifts', 'EXPERIMENTAL'],
      ['spendctl-shopping', 'EXPERIMENTAL'],
      ['spendctl-travel', 'SANDBOX'],
    ]);
    expect(catalog.gatedRails).toEqual([
      { rail: 'solana', refusalCode: 'SOLANA_SETTLEMENT_GATED' },
      { rail: 'tempo', refusalCode: 'TEMPO_SETTLEMENT_GATED' },
    ]);
    expect(catalog.maturityOrder).toEqual(['EXPERIMENTAL', 'SANDBOX', 'VERIFIED']);
    expect(
      catalog.providers.find((p) => p.id === 'spendctl-domains')?.capabilities.map((c) => c.id),
    ).toEqual([
      'domains.check',
      'domains.dns',
      'domains.quote',
      'domains.register',
      'domains.renew',
    ]);
  });

  test('derives effective maturity, refusal and executability for every capability', async () => {
    const catalog = await readCatalog();
    const rows = catalog.capabilities.map((c) => [
      c.id,
      c.provider.id,
      c.maturity,
      c.effectiveMaturity,
      c.refusalCode,
      c.executable,
      c.movesMoney,
    ]);
    expect(rows).toEqual([
      ['domains.check', 'spendctl-domains', 'VERIFIED', 'VERIFIED', null, true, true],
      [
        'domains.dns',
        'spendctl-domains',
        'EXPERIMENTAL',
        'EXPERIMENTAL',
        'CAPABILITY_NOT_VERIFIED',
        false,
        false,
      ],
      [
        'domains.quote',
        'spendctl-domains',
        'SANDBOX',
        'SANDBOX',
        'CAPABILITY_NOT_VERIFIED',
        false,
        false,
      ],
      [
        'domains.register',
        'spendctl-domains',
        'SANDBOX',
        'SANDBOX',
        'DOMAIN_REGISTRATION_GATED',
        false,
        false,
      ],
      [
        'domains.renew',
        'spendctl-domains',
        'SANDBOX',
        'SANDBOX',
        'DOMAIN_REGISTRATION_GATED',
        false,
        false,
      ],
      [
        'gifts.*',
        'spendctl-gifts',
        'EXPERIMENTAL',
        'EXPERIMENTAL',
        'GIFT_ORDERING_GATED',
        false,
        false,
      ],
      [
        'notify.*',
        'spendctl-email',
        'SANDBOX',
        'SANDBOX',
        'NOTIFICATION_SENDING_GATED',
        false,
        false,
      ],
      [
        'shop.*',
        'spendctl-shopping',
        'EXPERIMENTAL',
        'EXPERIMENTAL',
        'SHOPPING_GATED',
        false,
        false,
      ],
      [
        'travel.compare',
        'spendctl-travel',
        'SANDBOX',
        'SANDBOX',
        'TRAVEL_BOOKING_GATED',
        false,
        false,
      ],
      [
        'travel.search',
        'spendctl-travel',
        'SANDBOX',
        'SANDBOX',
        'TRAVEL_BOOKING_GATED',
        false,
        false,
      ],
    ]);
  });

  test('lists exactly the domains provider as executable today', async () => {
    const catalog = await readCatalog();
    expect(catalog.execution.providersExecutableToday).toEqual(['spendctl-domains']);
    expect(catalog.providers.filter((p) => p.executableToday).map((p) => p.id)).toEqual([
      'spendctl-domains',
    ]);
  });

  test('answers single providers and capabilities by id, and null for unknown ids', async () => {
    const result = await run(`query {
      provider(id: "spendctl-travel") { id maturity capabilities { id } }
      capability(id: "domains.check") { id effectiveMaturity provider { id maturity } }
      unknownProvider: provider(id: "acme") { id }
      unknownCapability: capability(id: "domains.transfer") { id }
    }`);
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      provider: {
        id: 'spendctl-travel',
        maturity: 'SANDBOX',
        capabilities: [{ id: 'travel.compare' }, { id: 'travel.search' }],
      },
      capability: {
        id: 'domains.check',
        effectiveMaturity: 'VERIFIED',
        provider: { id: 'spendctl-domains', maturity: 'VERIFIED' },
      },
      unknownProvider: null,
      unknownCapability: null,
    });
  });

  test('resolves Capability and Provider entity references for the gateway', async () => {
    const result = await run(
      `query ($representations: [_Any!]!) {
        _entities(representations: $representations) {
          ... on Capability { id effectiveMaturity refusalCode }
          ... on Provider { id executableToday }
        }
      }`,
      {
        representations: [
          { __typename: 'Capability', id: 'travel.search' },
          { __typename: 'Provider', id: 'spendctl-domains' },
          { __typename: 'Capability', id: 'no.such' },
        ],
      },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      _entities: [
        { id: 'travel.search', effectiveMaturity: 'SANDBOX', refusalCode: 'TRAVEL_BOOKING_GATED' },
        { id: 'spendctl-domains', executableToday: true },
        null,
      ],
    });
  });
});

describe('maturity changes (admin)', () => {
  test('promoting the travel provider to verified leaves its capabilities’ own maturity and refusals unchanged', async () => {
    const result = await run(
      SET_PROVIDER,
      { id: 'spendctl-travel', maturity: 'VERIFIED', reason: 'travel provider audited' },
      ADMIN,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      setProviderMaturity: { id: 'spendctl-travel', maturity: 'VERIFIED', executableToday: false },
    });

    const catalog = await readCatalog();
    const search = catalog.capabilities.find((c) => c.id === 'travel.search');
    expect(search).toMatchObject({
      maturity: 'SANDBOX',
      effectiveMaturity: 'SANDBOX',
      executable: false,
      refusalCode: 'TRAVEL_BOOKING_GATED',
    });
    expect(catalog.execution.providersExecutableToday).toEqual(['spendctl-domains']);
    expect(await auditRows()).toEqual([
      {
        subject_kind: 'provider',
        subject_id: 'spendctl-travel',
        from_maturity: 'sandbox',
        to_maturity: 'verified',
        reason: 'travel provider audited',
        actor: 'admin',
        changed_at: NOW,
      },
    ]);
  });

  test('demoting domains.check removes the domains provider from providersExecutableToday', async () => {
    const result = await run(
      SET_CAPABILITY,
      { id: 'domains.check', maturity: 'SANDBOX', reason: 'RDAP source under review' },
      ADMIN,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      setCapabilityMaturity: {
        id: 'domains.check',
        maturity: 'SANDBOX',
        effectiveMaturity: 'SANDBOX',
        refusalCode: 'CAPABILITY_NOT_VERIFIED',
        executable: false,
        provider: { id: 'spendctl-domains', executableToday: false },
      },
    });
    expect((await readCatalog()).execution.providersExecutableToday).toEqual([]);
  });

  test('a change to the same level is allowed and audited', async () => {
    const result = await run(
      SET_CAPABILITY,
      { id: 'domains.check', maturity: 'VERIFIED', reason: 're-confirmed' },
      ADMIN,
    );
    expect(result.errors).toBeUndefined();
    expect(await auditRows()).toEqual([
      expect.objectContaining({
        subject_id: 'domains.check',
        from_maturity: 'verified',
        to_maturity: 'verified',
        reason: 're-confirmed',
      }),
    ]);
  });

  test.each([
    ['an owner', OWNER, 'FORBIDDEN', 403],
    ['an anonymous caller', undefined, 'AUTH_REQUIRED', 401],
  ])('%s may not change a maturity, and nothing is written', async (_who, actor, code, status) => {
    const result = await run(
      SET_PROVIDER,
      { id: 'spendctl-travel', maturity: 'VERIFIED', reason: 'sneaky' },
      actor,
    );
    expect(result.data).toBeNull();
    expect(result.errors?.[0].extensions).toEqual({ code, status, retryable: false });
    expect(await auditRows()).toEqual([]);
    expect((await readCatalog()).providers.find((p) => p.id === 'spendctl-travel')?.maturity).toBe(
      'SANDBOX',
    );
  });

  test('an unknown id answers PROVIDER_NOT_FOUND or CAPABILITY_NOT_FOUND and audits nothing', async () => {
    const provider = await run(
      SET_PROVIDER,
      { id: 'acme-travel', maturity: 'VERIFIED', reason: 'x' },
      ADMIN,
    );
    expect(provider.errors?.[0]).toMatchObject({
      message: 'No provider with this id.',
      path: ['setProviderMaturity'],
      extensions: { code: 'PROVIDER_NOT_FOUND', status: 404, retryable: false },
    });
    const capability = await run(
      SET_CAPABILITY,
      { id: 'domains.transfer', maturity: 'VERIFIED', reason: 'x' },
      ADMIN,
    );
    expect(capability.errors?.[0].extensions).toEqual({
      code: 'CAPABILITY_NOT_FOUND',
      status: 404,
      retryable: false,
    });
    expect(await auditRows()).toEqual([]);
  });

  test('a blank reason is refused as REQUEST_INVALID naming the field', async () => {
    const result = await run(
      SET_PROVIDER,
      { id: 'spendctl-travel', maturity: 'VERIFIED', reason: '   ' },
      ADMIN,
    );
    expect(result.errors?.[0].extensions).toMatchObject({
      code: 'REQUEST_INVALID',
      status: 400,
      details: [{ field: 'reason' }],
    });
    expect(await auditRows()).toEqual([]);
  });
});

describe('catalog_changed notifications', () => {
  let listener: Client;
  const received: Notification[] = [];

  beforeAll(async () => {
    listener = new Client({ connectionString: db.url });
    await listener.connect();
    listener.on('notification', (notification) => received.push(notification));
    await listener.query('LISTEN catalog_changed');
  });

  afterAll(async () => {
    await listener?.end();
  });

  async function settle(ms = 150): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, ms));
  }

  // The reset above commits too, and its announcements arrive asynchronously: let them land first.
  beforeEach(async () => {
    await settle();
    received.length = 0;
  });

  function about(id: string): Notification[] {
    return received.filter((notification) => JSON.parse(notification.payload ?? '{}').id === id);
  }

  async function waitForNotification(id: string, timeoutMs = 5_000): Promise<Notification> {
    const deadline = Date.now() + timeoutMs;
    while (about(id).length === 0) {
      if (Date.now() > deadline) throw new Error(`no notification about ${id} on catalog_changed`);
      await settle(10);
    }
    return about(id)[0];
  }

  test('a maturity update is announced only after its transaction commits', async () => {
    const writer = new Client({ connectionString: db.url });
    await writer.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(
        `UPDATE catalog.capabilities SET maturity = 'verified', updated_at = $1 WHERE id = 'domains.quote'`,
        [NOW],
      );
      await settle();
      expect(about('domains.quote')).toEqual([]);
      await writer.query('COMMIT');
    } finally {
      await writer.end();
    }
    const notification = await waitForNotification('domains.quote');
    expect(notification.channel).toBe('catalog_changed');
    expect(JSON.parse(notification.payload ?? '')).toEqual({
      kind: 'capability',
      id: 'domains.quote',
      maturity: 'verified',
      changedAt: '2026-11-22T10:00:00.000Z',
    });
  });

  test('a rolled-back update is never announced', async () => {
    const writer = new Client({ connectionString: db.url });
    await writer.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(
        `UPDATE catalog.providers SET maturity = 'verified' WHERE id = 'spendctl-gifts'`,
      );
      await writer.query('ROLLBACK');
    } finally {
      await writer.end();
    }
    await settle(300);
    expect(about('spendctl-gifts')).toEqual([]);
  });

  test('a change to the same level is audited but not announced', async () => {
    const result = await run(
      SET_PROVIDER,
      { id: 'spendctl-domains', maturity: 'VERIFIED', reason: 're-confirmed' },
      ADMIN,
    );
    expect(result.errors).toBeUndefined();
    await settle(300);
    expect(about('spendctl-domains')).toEqual([]);
    expect(await auditRows()).toHaveLength(1);
  });

  test('the admin mutation announces the provider change', async () => {
    const result = await run(
      SET_PROVIDER,
      { id: 'spendctl-email', maturity: 'EXPERIMENTAL', reason: 'bounce rate' },
      ADMIN,
    );
    expect(result.errors).toBeUndefined();
    const notification = await waitForNotification('spendctl-email');
    expect(JSON.parse(notification.payload ?? '')).toEqual({
      kind: 'provider',
      id: 'spendctl-email',
      maturity: 'experimental',
      changedAt: '2026-11-22T10:00:00.000Z',
    });
  });
});

describe('the catalog read through TypeORM', () => {
  it('gives what one SQL statement gives: ids in byte order (COLLATE "C") and timestamps to the millisecond', async () => {
    const { rows: before } = await db.adminPool.query<{ updated_at: Date }>(
      "SELECT updated_at FROM catalog.capabilities WHERE id = 'shop.*'",
    );
    await db.adminPool.query(
      "UPDATE catalog.capabilities SET updated_at = '2026-11-22T10:00:00.123999Z' WHERE id = 'shop.*'",
    );
    try {
      const rows = await readCatalogRows(dataSource);
      const providers = await db.pool.query<{ id: string; updated_at: Date }>(
        'SELECT id, updated_at FROM catalog.providers ORDER BY id COLLATE "C"',
      );
      const capabilities = await db.pool.query<{ id: string; updated_at: Date }>(
        'SELECT id, updated_at FROM catalog.capabilities ORDER BY id COLLATE "C"',
      );
      expect(rows.providers.map((p) => [p.id, p.updatedAt])).toEqual(
        providers.rows.map((row) => [row.id, row.updated_at]),
      );
      expect(rows.capabilities.map((c) => [c.id, c.updatedAt])).toEqual(
        capabilities.rows.map((row) => [row.id, row.updated_at]),
      );
      expect(rows.capabilities.find((c) => c.id === 'shop.*')?.updatedAt.toISOString()).toBe(
        '2026-11-22T10:00:00.123Z',
      );
      expect(rows.gatedRails.map((r) => r.rail)).toEqual(['solana', 'tempo']);
    } finally {
      await db.adminPool.query(
        "UPDATE catalog.capabilities SET updated_at = $1 WHERE id = 'shop.*'",
        [before[0].updated_at],
      );
    }
  });
});
