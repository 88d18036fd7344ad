// The policy subgraph on a real database, through its GraphQL surface with signed actors: create
// (owner nonces, derived ids), update (versions never overwritten), pause/resume, who may do what,
// derived EXPIRED, the owner's paged list, and the SQL functions published for other subgraphs.
import { randomBytes } from 'node:crypto';
import type { ApolloServer } from '@apollo/server';
import { policyHash, policyIdFor } from '../../../core/canon/policy-identity';
import { policyDocument, rulesOf } from '../../../core/test-support/spend-fixtures';
import { type Actor, signActor } from '../../../platform/actor';
import { createTestDatabase, type TestDatabase } from '../../../platform/db/testDb';
import { createSubgraphServer, executeInProcess, type SubgraphContext } from '../../kit';
import { policySubgraph } from '../subgraph';

const SECRET = randomBytes(32);
const OWNER_A = `0x${'a1'.repeat(20)}`;
const OWNER_B = `0x${'b2'.repeat(20)}`;
const ADMIN: Actor = { kind: 'admin' };
const ownerA: Actor = { kind: 'owner', address: OWNER_A };
const ownerB: Actor = { kind: 'owner', address: OWNER_B };
const NOW = new Date('2026-11-22T09:00:00Z');

let db: TestDatabase;
let server: ApolloServer<SubgraphContext>;
let clock = NOW;

beforeAll(async () => {
  db = await createTestDatabase({ subgraphs: ['policy'] });
  server = await createSubgraphServer(policySubgraph, {
    db: db.pool,
    actorSecret: SECRET,
    now: () => clock,
  });
});

afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

beforeEach(() => {
  clock = NOW;
});

async function run(query: string, variables: Record<string, unknown>, actor?: Actor) {
  return executeInProcess(
    server,
    { query, variables },
    { actorHeader: actor === undefined ? undefined : signActor(actor, SECRET, clock.getTime()) },
  );
}

async function ok<T = any>(
  query: string,
  variables: Record<string, unknown>,
  actor?: Actor,
): Promise<T> {
  const result = await run(query, variables, actor);
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return result.data as T;
}

async function refusal(query: string, variables: Record<string, unknown>, actor?: Actor) {
  const result = await run(query, variables, actor);
  expect(result.errors).toHaveLength(1);
  return result.errors![0].extensions as { code: string; details?: unknown };
}

const FIELDS =
  'id owner ownerNonce name version status state policyHash expiresAt rules limits { dailyBudget perCallCap hardCap escalateAbove asset { symbol decimals } }';
const CREATE = `mutation ($p: JSONObject!) { createPolicy(policy: $p) { ${FIELDS} } }`;
const UPDATE = `mutation ($id: ID!, $p: JSONObject!) { updatePolicy(policyId: $id, policy: $p) { ${FIELDS} } }`;
const PAUSE = `mutation ($id: ID!) { pausePolicy(policyId: $id) { id status state updatedAt } }`;
const RESUME = `mutation ($id: ID!) { resumePolicy(policyId: $id) { id status state } }`;
const READ = `query ($id: ID!) { policy(id: $id) { ${FIELDS} createdAt versions { version policyHash rules } } }`;

function documentFor(owner: string, overrides: Record<string, unknown> = {}) {
  return policyDocument({ owner, ...overrides });
}

async function create(
  owner: string,
  actor: Actor = ADMIN,
  overrides: Record<string, unknown> = {},
) {
  return (await ok(CREATE, { p: documentFor(owner, overrides) }, actor)).createPolicy;
}

describe('createPolicy', () => {
  it('derives the id from the owner and their next nonce, stores the normalised rules and their hash', async () => {
    const owner = `0x${'c3'.repeat(20)}`;
    const first = await create(owner);
    const second = await create(owner);
    const rules = rulesOf(documentFor(owner));
    expect(first).toMatchObject({
      id: policyIdFor(owner, 1n),
      owner,
      ownerNonce: '1',
      version: 1,
      status: 'ACTIVE',
      state: 'ACTIVE',
    });
    expect(second).toMatchObject({ id: policyIdFor(owner, 2n), ownerNonce: '2' });
    expect(first.policyHash).toBe(policyHash(rules));
    expect(first.rules).toEqual(rules);
    expect(first.name).toBe('research agent');
    expect(first.limits).toEqual({
      dailyBudget: '25.00',
      perCallCap: '2.00',
      hardCap: '10.00',
      escalateAbove: '1.00',
      asset: { symbol: 'USDT0', decimals: 6 },
    });
  });

  it('gives concurrent creates by one owner distinct, gap-free nonces', async () => {
    const owner = `0x${'d4'.repeat(20)}`;
    const created = await Promise.all(Array.from({ length: 8 }, () => create(owner)));
    expect(
      created.map((policy) => policy.ownerNonce).sort((a, b) => Number(a) - Number(b)),
    ).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
    expect(new Set(created.map((policy) => policy.id)).size).toBe(8);
  });

  it('refuses an invalid document with POLICY_RULES_INVALID listing every field', async () => {
    const extensions = await refusal(
      CREATE,
      {
        p: documentFor(OWNER_A, {
          perCallCap: '30.00',
          escalateAbove: '11.00',
          categories: { allow: [] },
          extra: 1,
        }),
      },
      ADMIN,
    );
    expect(extensions.code).toBe('POLICY_RULES_INVALID');
    expect((extensions.details as Array<{ field: string }>).map((e) => e.field).sort()).toEqual(
      ['categories.allow', 'escalateAbove', 'extra', 'perCallCap'].sort(),
    );
  });

  it('lets an owner session create only for its own address', async () => {
    expect((await create(OWNER_A, ownerA)).owner).toBe(OWNER_A);
    const extensions = await refusal(CREATE, { p: documentFor(OWNER_B) }, ownerA);
    expect(extensions.code).toBe('FORBIDDEN');
  });

  it.each<[string, Actor | undefined, string]>([
    ['an anonymous caller', undefined, 'AUTH_REQUIRED'],
    ['a consumer session', { kind: 'consumer', address: OWNER_A, policyId: '1' }, 'FORBIDDEN'],
  ])('refuses %s', async (_who, actor, code) => {
    expect((await refusal(CREATE, { p: documentFor(OWNER_A) }, actor)).code).toBe(code);
  });
});

describe('updatePolicy', () => {
  it('writes a new version with a new hash and keeps the old version readable', async () => {
    const created = await create(OWNER_A);
    const updated = (
      await ok(
        UPDATE,
        { id: created.id, p: documentFor(OWNER_A, { dailyBudget: '50.00' }) },
        ownerA,
      )
    ).updatePolicy;
    expect(updated).toMatchObject({ id: created.id, version: 2, status: 'ACTIVE' });
    expect(updated.policyHash).not.toBe(created.policyHash);
    expect(updated.limits.dailyBudget).toBe('50.00');

    const read = (await ok(READ, { id: created.id }, ownerA)).policy;
    expect(
      read.versions.map((v: { version: number; policyHash: string }) => [v.version, v.policyHash]),
    ).toEqual([
      [2, updated.policyHash],
      [1, created.policyHash],
    ]);
    expect(read.versions[1].rules.dailyBudget).toBe('25.00');
    const v1 = await ok(
      'query ($id: ID!) { policyVersion(policyId: $id, version: 1) { version policyHash limits { dailyBudget } } }',
      { id: created.id },
      ADMIN,
    );
    expect(v1.policyVersion).toEqual({
      version: 1,
      policyHash: created.policyHash,
      limits: { dailyBudget: '25.00' },
    });
  });

  it('writes nothing when the normalised rules are unchanged', async () => {
    const created = await create(OWNER_A);
    const respelled = documentFor(OWNER_A, {
      dailyBudget: '25',
      categories: { allow: ['RESEARCH', 'security', 'market-data'], deny: [] },
    });
    const same = (await ok(UPDATE, { id: created.id, p: respelled }, ADMIN)).updatePolicy;
    expect(same).toMatchObject({ version: 1, policyHash: created.policyHash });
  });

  it('keeps the owner: a document naming another owner is POLICY_RULES_INVALID', async () => {
    const created = await create(OWNER_A);
    const extensions = await refusal(UPDATE, { id: created.id, p: documentFor(OWNER_B) }, ADMIN);
    expect(extensions).toMatchObject({
      code: 'POLICY_RULES_INVALID',
      details: [expect.objectContaining({ field: 'owner' })],
    });
  });

  it('answers another owner exactly as for a missing policy', async () => {
    const created = await create(OWNER_A);
    expect((await refusal(UPDATE, { id: created.id, p: documentFor(OWNER_A) }, ownerB)).code).toBe(
      'POLICY_NOT_FOUND',
    );
    expect((await refusal(UPDATE, { id: '12345', p: documentFor(OWNER_A) }, ownerB)).code).toBe(
      'POLICY_NOT_FOUND',
    );
    expect((await ok(READ, { id: created.id }, ownerA)).policy.version).toBe(1);
  });

  it('serialises concurrent updates into consecutive versions', async () => {
    const created = await create(OWNER_A);
    await Promise.all(
      ['30.00', '31.00', '32.00', '33.00'].map((dailyBudget) =>
        ok(UPDATE, { id: created.id, p: documentFor(OWNER_A, { dailyBudget }) }, ADMIN),
      ),
    );
    const read = (await ok(READ, { id: created.id }, ADMIN)).policy;
    expect(read.versions.map((v: { version: number }) => v.version)).toEqual([5, 4, 3, 2, 1]);
  });
});

describe('pause and resume', () => {
  it('change the status in place, idempotently, and never touch the rules', async () => {
    const created = await create(OWNER_A);
    clock = new Date(NOW.getTime() + 60_000);
    const paused = (await ok(PAUSE, { id: created.id }, ownerA)).pausePolicy;
    expect(paused).toMatchObject({
      status: 'PAUSED',
      state: 'PAUSED',
      updatedAt: clock.toISOString(),
    });
    expect((await ok(PAUSE, { id: created.id }, ADMIN)).pausePolicy.status).toBe('PAUSED');
    expect((await ok(RESUME, { id: created.id }, ADMIN)).resumePolicy).toMatchObject({
      status: 'ACTIVE',
      state: 'ACTIVE',
    });
    const read = (await ok(READ, { id: created.id }, ADMIN)).policy;
    expect([read.version, read.policyHash]).toEqual([1, created.policyHash]);
    const changes = await db.pool.query<{ change: string }>(
      'SELECT change FROM policy.policy_changes WHERE policy_id = $1 ORDER BY seq',
      [created.id],
    );
    expect(changes.rows.map((row) => row.change)).toEqual(['CREATED', 'PAUSED', 'RESUMED']);
  });

  it('are refused to other owners, consumers and anonymous callers', async () => {
    const created = await create(OWNER_A);
    expect((await refusal(PAUSE, { id: created.id }, ownerB)).code).toBe('POLICY_NOT_FOUND');
    expect(
      (
        await refusal(
          PAUSE,
          { id: created.id },
          { kind: 'consumer', address: OWNER_A, policyId: created.id },
        )
      ).code,
    ).toBe('FORBIDDEN');
    expect((await refusal(PAUSE, { id: created.id })).code).toBe('AUTH_REQUIRED');
    expect((await ok(READ, { id: created.id }, ADMIN)).policy.status).toBe('ACTIVE');
  });
});

test('EXPIRED is derived from expiresAt by the injected clock, never stored', async () => {
  const created = await create(OWNER_A, ADMIN, { expiresAt: '2027-01-01T00:00:00Z' });
  clock = new Date('2027-01-01T00:00:00Z');
  const read = (await ok(READ, { id: created.id }, ADMIN)).policy;
  expect([read.status, read.state]).toEqual(['ACTIVE', 'EXPIRED']);
  const stored = await db.pool.query('SELECT status FROM policy.policies WHERE policy_id = $1', [
    created.id,
  ]);
  expect(stored.rows[0].status).toBe('ACTIVE');
});

describe('policies', () => {
  const LIST =
    'query ($first: Int, $after: String, $owner: String) { policies(first: $first, after: $after, owner: $owner) { nodes { id owner version } pageInfo { endCursor hasNextPage } } }';

  it('lists only the signed-in owner’s policies, at their latest version, in pages', async () => {
    const owner = `0x${'e5'.repeat(20)}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await create(owner)).id);
    await ok(UPDATE, { id: ids[0], p: documentFor(owner, { dailyBudget: '40.00' }) }, ADMIN);
    const me: Actor = { kind: 'owner', address: owner };
    const seen: Array<{ id: string; owner: string; version: number }> = [];
    let after: string | null = null;
    do {
      const page: any = (await ok(LIST, { first: 2, after }, me)).policies;
      seen.push(...page.nodes);
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    } while (after !== null);
    expect(seen.map((p) => p.id)).toEqual(
      [...ids].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)),
    );
    expect(seen.every((p) => p.owner === owner)).toBe(true);
    expect(seen.find((p) => p.id === ids[0])?.version).toBe(2);
  });

  it('lets an admin list every owner or filter by one; an owner may not name another', async () => {
    const all = (await ok(LIST, { first: 100 }, ADMIN)).policies.nodes;
    expect(new Set(all.map((p: { owner: string }) => p.owner)).size).toBeGreaterThan(2);
    const onlyA = (
      await ok(LIST, { first: 100, owner: OWNER_A.toUpperCase().replace('0X', '0x') }, ADMIN)
    ).policies.nodes;
    expect(onlyA.every((p: { owner: string }) => p.owner === OWNER_A)).toBe(true);
    expect((await refusal(LIST, { owner: OWNER_A }, ownerB)).code).toBe('FORBIDDEN');
    expect((await refusal(LIST, {}, undefined)).code).toBe('AUTH_REQUIRED');
    expect((await refusal(LIST, { first: 101 }, ADMIN)).code).toBe('REQUEST_INVALID');
  });
});

describe('consumerPolicy', () => {
  const CONSUMER_READ =
    'query ($id: ID) { consumerPolicy(policyId: $id) { id version policyHash } }';

  it('answers a consumer session with its bound policy and refuses naming another', async () => {
    const created = await create(OWNER_A);
    const consumer: Actor = { kind: 'consumer', address: OWNER_A, policyId: created.id };
    expect((await ok(CONSUMER_READ, {}, consumer)).consumerPolicy).toEqual({
      id: created.id,
      version: 1,
      policyHash: created.policyHash,
    });
    expect((await refusal(CONSUMER_READ, { id: '42' }, consumer)).code).toBe('FORBIDDEN');
  });

  it('needs a credential while consumer auth is required', async () => {
    const created = await create(OWNER_A);
    expect((await refusal(CONSUMER_READ, { id: created.id })).code).toBe('AUTH_REQUIRED');
    expect((await refusal(CONSUMER_READ, {})).code).toBe('AUTH_REQUIRED');
    expect((await refusal(CONSUMER_READ, { id: created.id }, ownerB)).code).toBe(
      'POLICY_NOT_FOUND',
    );
    expect((await refusal(CONSUMER_READ, {}, ADMIN)).code).toBe('POLICY_ID_REQUIRED');
  });
});

describe('published SQL functions', () => {
  it('policy.current_policy returns the latest version row, and nothing for unknown or malformed ids', async () => {
    const created = await create(OWNER_A);
    const updated = (
      await ok(UPDATE, { id: created.id, p: documentFor(OWNER_A, { perCallCap: '3.00' }) }, ADMIN)
    ).updatePolicy;
    await ok(PAUSE, { id: created.id }, ADMIN);
    const row = (await db.pool.query('SELECT * FROM policy.current_policy($1)', [created.id]))
      .rows[0];
    expect(row).toEqual({
      id: created.id,
      version: 2,
      owner: OWNER_A,
      status: 'PAUSED',
      policy_hash: updated.policyHash,
      rules: updated.rules,
      expires_at: new Date('2027-12-31T00:00:00Z'),
    });
    for (const id of ['999', 'x', '1'.repeat(79), '']) {
      expect((await db.pool.query('SELECT * FROM policy.current_policy($1)', [id])).rows).toEqual(
        [],
      );
    }
  });

  it('policy.policy_owner keeps answering the owner of policies created here', async () => {
    const created = await create(OWNER_B);
    const result = await db.pool.query('SELECT policy.policy_owner($1) AS owner', [created.id]);
    expect(result.rows[0].owner).toBe(OWNER_B);
  });

  it('the change audit is append-only', async () => {
    // As the superuser: the service role holds no DELETE grant on the audit at all.
    await expect(db.adminPool.query('DELETE FROM policy.policy_changes')).rejects.toThrow(
      /append-only/,
    );
  });
});
