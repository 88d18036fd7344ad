import { randomBytes } from 'node:crypto';
import type { ApolloServer } from '@apollo/server';
import { type Actor, signActor } from '../../platform/actor';
import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';
import { createSubgraphServer, executeInProcess, type SubgraphContext } from '../kit';
import { intentSubgraph } from './subgraph';

const SECRET = randomBytes(32);
const INTENT_HASH = `0x${'ab'.repeat(32)}`;
const OWNER = `0x${'a1'.repeat(20)}`;
/** An amount beyond 2^53: it must survive as an exact decimal string. */
const AMOUNT = (2n ** 200n).toString();

let db: TestDatabase;
let server: ApolloServer<SubgraphContext>;

beforeAll(async () => {
  db = await createTestDatabase({ subgraphs: ['intent'] });
  await db.pool.query(
    `INSERT INTO intent.spend_intents (intent_hash, policy_id, policy_version, agent_id, amount, canonical, created_at)
     VALUES ($1, '7', 1, 'research-bot-1', $2, '{}', '2026-11-22T09:00:00Z')`,
    [INTENT_HASH, AMOUNT],
  );
  server = await createSubgraphServer(intentSubgraph, { db: db.pool, actorSecret: SECRET });
});

afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

async function readIntent(intentHash: string, actor?: Actor) {
  const result = await executeInProcess(
    server,
    {
      query:
        'query ($h: ID!) { spendIntent(intentHash: $h) { intentHash policyId agentId amountAtomic createdAt } }',
      variables: { h: intentHash },
    },
    { actorHeader: actor === undefined ? undefined : signActor(actor, SECRET) },
  );
  expect(result.errors).toBeUndefined();
  return (result.data as { spendIntent: unknown }).spendIntent;
}

test('an admin reads a spend intent with its amount exact', async () => {
  expect(
    await readIntent(INTENT_HASH.toUpperCase().replace('0X', '0x'), { kind: 'admin' }),
  ).toEqual({
    intentHash: INTENT_HASH,
    policyId: '7',
    agentId: 'research-bot-1',
    amountAtomic: AMOUNT,
    createdAt: '2026-11-22T09:00:00.000Z',
  });
});

test.each<[string, Actor | undefined]>([
  ['an owner (owner reads arrive with the policy join)', { kind: 'owner', address: OWNER }],
  ['a consumer', { kind: 'consumer', address: OWNER, policyId: '7' }],
  ['an anonymous caller', undefined],
])('%s gets null', async (_who, actor) => {
  expect(await readIntent(INTENT_HASH, actor)).toBeNull();
});

test('unknown and malformed hashes are null, not errors', async () => {
  expect(await readIntent(`0x${'cd'.repeat(32)}`, { kind: 'admin' })).toBeNull();
  expect(await readIntent('0x1234', { kind: 'admin' })).toBeNull();
});
