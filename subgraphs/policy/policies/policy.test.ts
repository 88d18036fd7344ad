import { randomBytes } from 'node:crypto';
import type { ApolloServer } from '@apollo/server';
import { type Actor, signActor } from '../../../platform/actor';
import { createTestDatabase, type TestDatabase } from '../../../platform/db/testDb';
import { createSubgraphServer, executeInProcess, type SubgraphContext } from '../../kit';
import { policySubgraph } from '../subgraph';

const SECRET = randomBytes(32);
const OWNER_A = `0x${'a1'.repeat(20)}`;
const OWNER_B = `0x${'b2'.repeat(20)}`;
/** A policyId beyond 2^64: it must survive as an exact decimal string. */
const POLICY_A = (2n ** 200n + 7n).toString();
const POLICY_B = '42';

let db: TestDatabase;
let server: ApolloServer<SubgraphContext>;

beforeAll(async () => {
  db = await createTestDatabase({ subgraphs: ['policy'] });
  await db.pool.query(
    `INSERT INTO policy.policies (policy_id, version, owner, status, policy_hash, rules, expires_at) VALUES
       ($1, 1, $2, 'ACTIVE', $4, '{}', NULL),
       ($1, 2, $2, 'PAUSED', $5, '{}', '2027-12-31T00:00:00Z'),
       ($3, 1, $6, 'ACTIVE', $4, '{}', NULL)`,
    [POLICY_A, OWNER_A, POLICY_B, `0x${'11'.repeat(32)}`, `0x${'22'.repeat(32)}`, OWNER_B],
  );
  server = await createSubgraphServer(policySubgraph, { db: db.pool, actorSecret: SECRET });
});

afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

async function readPolicy(id: string, actor?: Actor) {
  const result = await executeInProcess(
    server,
    {
      query:
        'query ($id: ID!) { policy(id: $id) { id owner version status policyHash expiresAt } }',
      variables: { id },
    },
    { actorHeader: actor === undefined ? undefined : signActor(actor, SECRET) },
  );
  expect(result.errors).toBeUndefined();
  return (result.data as { policy: unknown }).policy;
}

const LATEST_A = {
  id: POLICY_A,
  owner: OWNER_A,
  version: 2,
  status: 'PAUSED',
  policyHash: `0x${'22'.repeat(32)}`,
  expiresAt: '2027-12-31T00:00:00.000Z',
};

test('an admin reads the latest version of any policy, with its uint256 id exact', async () => {
  expect(await readPolicy(POLICY_A, { kind: 'admin' })).toEqual(LATEST_A);
});

test('the owning owner reads their own policy', async () => {
  expect(await readPolicy(POLICY_A, { kind: 'owner', address: OWNER_A })).toEqual(LATEST_A);
});

test.each<[string, Actor | undefined]>([
  ['another owner', { kind: 'owner', address: OWNER_B }],
  ['an anonymous caller', undefined],
  ['a consumer session of that owner', { kind: 'consumer', address: OWNER_A, policyId: POLICY_A }],
])('%s gets null, exactly as for a missing policy', async (_who, actor) => {
  expect(await readPolicy(POLICY_A, actor)).toBeNull();
});

test('unknown and malformed ids are null, not errors', async () => {
  expect(await readPolicy('999', { kind: 'admin' })).toBeNull();
  expect(await readPolicy('not-a-number', { kind: 'admin' })).toBeNull();
});

test('entity references follow the same rule: owner B resolves only their own policy', async () => {
  const result = await executeInProcess(
    server,
    {
      query:
        'query ($r: [_Any!]!) { _entities(representations: $r) { ... on Policy { id owner } } }',
      variables: {
        r: [
          { __typename: 'Policy', id: POLICY_A },
          { __typename: 'Policy', id: POLICY_B },
        ],
      },
    },
    { actorHeader: signActor({ kind: 'owner', address: OWNER_B }, SECRET) },
  );
  expect(result.errors).toBeUndefined();
  expect(result.data).toEqual({ _entities: [null, { id: POLICY_B, owner: OWNER_B }] });
});
