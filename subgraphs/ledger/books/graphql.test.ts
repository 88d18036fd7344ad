// The ledger subgraph over HTTP with signed actors: owners see the money of the policies they own
// (latest version's owner) and nothing else, admins see everything, anonymous callers nothing;
// cursors stay stable while groups are added; operator mutations are admin-only and audited.
import { randomBytes } from 'node:crypto';
import type { ApolloServer } from '@apollo/server';
import { ACTOR_HEADER, type Actor, signActor } from '../../../platform/actor';
import type { TestDatabase } from '../../../platform/db/testDb';
import {
  createSubgraphServer,
  startSubgraphHttp,
  type SubgraphContext,
  type SubgraphHttpHandle,
} from '../../kit';
import { accountId, treasuryAccount } from '../accounts/names';
import { ledgerSubgraph } from '../subgraph';
import { postFunding, postServiceFee } from '../posting/groupKinds';
import { postGroup, postTreasuryTransfer } from '../posting/writes';
import { createLedgerTestDatabase, intentId, registerRails, USDC, USDT0 } from '../test-support';

const SECRET = randomBytes(32);
const ALICE = `0x${'a1'.repeat(20)}`;
const BOB = `0x${'b2'.repeat(20)}`;
const ALICE_POLICY = '101';
const BOB_POLICY = '102';
/** Version 1 was Alice's, version 2 (the latest) is Bob's: Alice no longer sees its money. */
const HANDED_OVER_POLICY = '103';
const ALICE_INTENT_HASH = `0x${'ab'.repeat(32)}`;

let db: TestDatabase;
let server: ApolloServer<SubgraphContext>;
let http: SubgraphHttpHandle;
const posted: Record<string, string> = {};
const internalErrors: unknown[] = [];

async function insertPolicyVersion(
  policyId: string,
  version: number,
  owner: string,
): Promise<void> {
  // Fixture rows in the policy subgraph's table; the ledger itself only calls policy.policy_owner.
  await db.pool.query(
    `INSERT INTO policy.policies (policy_id, version, owner, status, policy_hash, rules)
     VALUES ($1, $2, $3, 'ACTIVE', $4, '{}'::jsonb)`,
    [policyId, version, owner, `0x${String(version).repeat(64)}`],
  );
}

beforeAll(async () => {
  db = await createLedgerTestDatabase({ subgraphs: ['ledger', 'policy'] });
  await registerRails(db.pool);
  await insertPolicyVersion(ALICE_POLICY, 1, ALICE);
  await insertPolicyVersion(BOB_POLICY, 1, BOB);
  await insertPolicyVersion(HANDED_OVER_POLICY, 1, ALICE);
  await insertPolicyVersion(HANDED_OVER_POLICY, 2, BOB);
  posted.aliceFunding = await postFunding(db.pool, {
    asset: USDT0,
    amountAtomic: 50_250n,
    policyId: ALICE_POLICY,
    intentRef: ALICE_INTENT_HASH,
    idempotencyKey: 'funding:alice',
  });
  posted.aliceFee = await postServiceFee(db.pool, {
    asset: USDT0,
    feeAtomic: 50_000n,
    route: 'preflight_payment',
    policyId: ALICE_POLICY,
    intentRef: ALICE_INTENT_HASH,
    idempotencyKey: 'fee:alice',
  });
  posted.bobFunding = await postFunding(db.pool, {
    asset: USDT0,
    amountAtomic: 7_000n,
    policyId: BOB_POLICY,
    intentRef: intentId(2),
    idempotencyKey: 'funding:bob',
  });
  posted.handedOver = await postFunding(db.pool, {
    asset: USDT0,
    amountAtomic: 1_000n,
    policyId: HANDED_OVER_POLICY,
    intentRef: intentId(3),
    idempotencyKey: 'funding:handed-over',
  });
  const sweep = await postTreasuryTransfer(db.pool, {
    source: { asset: USDT0, amountAtomic: 40_000n },
    destination: { asset: USDC, amountAtomic: 39_990n },
    idempotencyKey: 'sweep:1',
  });
  posted.sweepSource = sweep.sourceGroupId;
  server = await createSubgraphServer(ledgerSubgraph, {
    db: db.pool,
    actorSecret: SECRET,
    onInternalError: (error) => internalErrors.push(error),
  });
  http = await startSubgraphHttp(server, { host: '127.0.0.1', port: 0 });
});

afterEach(() => {
  expect(internalErrors).toEqual([]);
});

afterAll(async () => {
  await http?.stop();
  await server?.stop();
  await db?.drop();
});

const owner = (address: string): Actor => ({ kind: 'owner', address });
const ADMIN: Actor = { kind: 'admin' };

interface GraphQLResponse {
  status: number;
  data?: any;
  errors?: Array<{ message: string; extensions: { code: string } }>;
}

async function graphql(
  actor: Actor | null,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<GraphQLResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (actor !== null) headers[ACTOR_HEADER] = signActor(actor, SECRET);
  const response = await fetch(http.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as Omit<GraphQLResponse, 'status'>;
  return { status: response.status, ...body };
}

const GROUP_IDS = `query Groups($filter: LedgerFilter, $first: Int, $after: String) {
  ledgerGroups(filter: $filter, first: $first, after: $after) { nodes { id policyId kind idempotencyKey } pageInfo { endCursor hasNextPage } }
}`;
const ENTRIES = `query Entries($filter: LedgerFilter) {
  ledgerEntries(filter: $filter, first: 200) { nodes { groupId accountKey amountAtomic } }
}`;

function ids(response: GraphQLResponse): string[] {
  expect(response.errors).toBeUndefined();
  return response.data.ledgerGroups.nodes.map((node: { id: string }) => node.id).sort();
}

describe('who sees which money', () => {
  it('shows an owner the groups and entries of their own policies and not another owner’s', async () => {
    expect(ids(await graphql(owner(ALICE), GROUP_IDS))).toEqual(
      [posted.aliceFunding, posted.aliceFee].sort(),
    );
    expect(ids(await graphql(owner(BOB), GROUP_IDS))).toEqual(
      [posted.bobFunding, posted.handedOver].sort(),
    );
    const entries = await graphql(owner(ALICE), ENTRIES);
    expect(entries.errors).toBeUndefined();
    const groupsOfEntries = new Set(
      entries.data.ledgerEntries.nodes.map((entry: { groupId: string }) => entry.groupId),
    );
    expect([...groupsOfEntries].sort()).toEqual([posted.aliceFunding, posted.aliceFee].sort());
    expect(entries.data.ledgerEntries.nodes).toHaveLength(4);
  });

  it('refuses an owner who asks for another owner’s policy, and hides other groups by id', async () => {
    const asked = await graphql(owner(ALICE), GROUP_IDS, { filter: { policyId: BOB_POLICY } });
    expect(asked.errors?.[0].extensions.code).toBe('FORBIDDEN');
    const handedOver = await graphql(owner(ALICE), GROUP_IDS, {
      filter: { policyId: HANDED_OVER_POLICY },
    });
    expect(handedOver.errors?.[0].extensions.code).toBe('FORBIDDEN');
    const byId = await graphql(owner(ALICE), 'query($id: ID!) { ledgerGroup(id: $id) { id } }', {
      id: posted.bobFunding,
    });
    expect(byId.errors).toBeUndefined();
    expect(byId.data.ledgerGroup).toBeNull();
    const entries = await graphql(owner(BOB), ENTRIES, {
      filter: { intentRef: ALICE_INTENT_HASH },
    });
    expect(entries.data.ledgerEntries.nodes).toEqual([]);
  });

  it('shows an admin everything, including groups of no policy and the idempotency keys', async () => {
    const all = await graphql(ADMIN, GROUP_IDS, { first: 200 });
    expect(ids(all)).toEqual(expect.arrayContaining(Object.values(posted)));
    expect(
      all.data.ledgerGroups.nodes.find((node: { id: string }) => node.id === posted.bobFunding)
        .idempotencyKey,
    ).toBe('funding:bob');
    const alice = await graphql(owner(ALICE), GROUP_IDS);
    expect(
      alice.data.ledgerGroups.nodes.map(
        (node: { idempotencyKey: string | null }) => node.idempotencyKey,
      ),
    ).toEqual([null, null]);
  });

  it('confines a consumer session to its one policy', async () => {
    const consumer: Actor = { kind: 'consumer', address: ALICE, policyId: ALICE_POLICY };
    expect(ids(await graphql(consumer, GROUP_IDS))).toEqual(
      [posted.aliceFunding, posted.aliceFee].sort(),
    );
    expect(
      (await graphql(consumer, GROUP_IDS, { filter: { policyId: HANDED_OVER_POLICY } })).errors?.[0]
        .extensions.code,
    ).toBe('FORBIDDEN');
  });

  it('refuses anonymous callers everywhere with AUTH_REQUIRED', async () => {
    for (const query of [
      GROUP_IDS,
      ENTRIES,
      '{ trialBalance { netAtomic } }',
      '{ ledgerAccounts { nodes { key } } }',
      '{ treasuryDrift { driftAtomic } }',
    ]) {
      const response = await graphql(null, query);
      expect({ query, code: response.errors?.[0].extensions.code, data: response.data }).toEqual({
        query,
        code: 'AUTH_REQUIRED',
        data: null,
      });
    }
  });

  it('keeps accounts, the trial balance and treasury drift for admins', async () => {
    for (const query of [
      '{ trialBalance { netAtomic } }',
      '{ ledgerAccounts { nodes { key } } }',
      '{ treasuryDrift { driftAtomic } }',
    ]) {
      expect((await graphql(owner(ALICE), query)).errors?.[0].extensions.code).toBe('FORBIDDEN');
    }
    const trial = await graphql(
      ADMIN,
      '{ trialBalance { asset { id symbol } debitsAtomic creditsAtomic netAtomic balanced byKind { kind balanceAtomic } } }',
    );
    expect(trial.errors).toBeUndefined();
    expect(trial.data.trialBalance).toHaveLength(2);
    for (const line of trial.data.trialBalance)
      expect(line).toMatchObject({ netAtomic: '0', balanced: true });
    const usdt0 = trial.data.trialBalance.find(
      (line: { asset: { id: string } }) => line.asset.id === USDT0,
    );
    expect(usdt0.byKind).toEqual(
      expect.arrayContaining([
        { kind: 'TREASURY', balanceAtomic: String(50_250 + 50_000 + 7_000 + 1_000 - 40_000) },
        { kind: 'FEE_REVENUE', balanceAtomic: '-50000' },
      ]),
    );
    const accounts = await graphql(
      ADMIN,
      'query($key: ID!) { ledgerAccount(key: $key) { key kind ref balanceAtomic entryCount asset { symbol } } }',
      {
        key: treasuryAccount(USDC),
      },
    );
    expect(accounts.data.ledgerAccount).toEqual({
      key: treasuryAccount(USDC),
      kind: 'TREASURY',
      ref: 'float',
      balanceAtomic: '39990',
      entryCount: 1,
      asset: { symbol: 'USDC' },
    });
  });
});

describe('entity extensions', () => {
  it('resolves Policy.ledgerGroups and SpendIntent.ledgerGroups for the owner through _entities', async () => {
    const query = `query($representations: [_Any!]!) {
      _entities(representations: $representations) {
        ... on Policy { id ledgerGroups { nodes { id kind } } }
        ... on SpendIntent { intentHash ledgerGroups(kind: FUNDING) { nodes { id entries { accountKey amountAtomic } } } }
      }
    }`;
    const representations = [
      { __typename: 'Policy', id: ALICE_POLICY },
      { __typename: 'SpendIntent', intentHash: ALICE_INTENT_HASH },
    ];
    const response = await graphql(owner(ALICE), query, { representations });
    expect(response.errors).toBeUndefined();
    const [policy, intent] = response.data._entities;
    expect(policy.ledgerGroups.nodes.map((node: { id: string }) => node.id).sort()).toEqual(
      [posted.aliceFunding, posted.aliceFee].sort(),
    );
    expect(intent.ledgerGroups.nodes).toEqual([
      {
        id: posted.aliceFunding,
        entries: [
          { accountKey: treasuryAccount(USDT0), amountAtomic: '50250' },
          { accountKey: accountId('USER_OBLIGATION', USDT0, ALICE_POLICY), amountAtomic: '-50250' },
        ],
      },
    ]);
    const bob = await graphql(owner(BOB), query, {
      representations: [{ __typename: 'Policy', id: ALICE_POLICY }],
    });
    expect(bob.errors?.[0].extensions.code).toBe('FORBIDDEN');
    const bobIntent = await graphql(owner(BOB), query, {
      representations: [{ __typename: 'SpendIntent', intentHash: ALICE_INTENT_HASH }],
    });
    expect(bobIntent.data._entities[0].ledgerGroups.nodes).toEqual([]);
  });
});

describe('cursor pagination', () => {
  it('returns every group that existed when paging began exactly once while new groups are posted between pages', async () => {
    const policyId = '555';
    await insertPolicyVersion(policyId, 1, ALICE);
    const post = (n: number) =>
      postGroup(db.pool, {
        kind: 'FUNDING',
        asset: USDT0,
        entries: [
          { account: treasuryAccount(USDT0), amountAtomic: BigInt(n) },
          { account: accountId('USER_OBLIGATION', USDT0, policyId), amountAtomic: -BigInt(n) },
        ],
        idempotencyKey: `page:${n}`,
        policyId,
      });
    const existing = new Set<string>();
    for (let n = 1; n <= 23; n += 1) existing.add(await post(n));
    const seen: string[] = [];
    let after: string | null = null;
    let extra = 100;
    do {
      const page: GraphQLResponse = await graphql(owner(ALICE), GROUP_IDS, {
        filter: { policyId },
        first: 5,
        after,
      });
      expect(page.errors).toBeUndefined();
      seen.push(...page.data.ledgerGroups.nodes.map((node: { id: string }) => node.id));
      after = page.data.ledgerGroups.pageInfo.hasNextPage
        ? page.data.ledgerGroups.pageInfo.endCursor
        : null;
      await Promise.all([post((extra += 1)), post((extra += 1))]);
    } while (after !== null);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => existing.has(id))).toHaveLength(existing.size);
  });

  it('pages through accounts by key for an admin, each account once', async () => {
    const query =
      'query($after: String) { ledgerAccounts(first: 3, after: $after) { nodes { key } pageInfo { endCursor hasNextPage } } }';
    const keys: string[] = [];
    let after: string | null = null;
    do {
      const page: GraphQLResponse = await graphql(ADMIN, query, { after });
      expect(page.errors).toBeUndefined();
      keys.push(...page.data.ledgerAccounts.nodes.map((node: { key: string }) => node.key));
      after = page.data.ledgerAccounts.pageInfo.hasNextPage
        ? page.data.ledgerAccounts.pageInfo.endCursor
        : null;
    } while (after !== null);
    const all = await db.pool.query<{ account_id: string }>(
      'SELECT account_id FROM ledger.accounts ORDER BY account_id',
    );
    expect(keys).toEqual(all.rows.map((row) => row.account_id));
  });

  it('refuses a cursor it did not hand out and a page size beyond the limit', async () => {
    expect(
      (await graphql(ADMIN, GROUP_IDS, { after: 'bm90LWEtY3Vyc29y' })).errors?.[0].extensions.code,
    ).toBe('REQUEST_INVALID');
    expect((await graphql(ADMIN, GROUP_IDS, { first: 201 })).errors?.[0].extensions.code).toBe(
      'REQUEST_INVALID',
    );
  });

  it('filters by account, kind and time range', async () => {
    const fee = await graphql(ADMIN, GROUP_IDS, {
      filter: { account: accountId('FEE_REVENUE', USDT0, 'preflight_payment') },
    });
    expect(ids(fee)).toEqual([posted.aliceFee]);
    const transfers = await graphql(ADMIN, GROUP_IDS, { filter: { kind: 'TREASURY_TRANSFER' } });
    expect(ids(transfers)).toHaveLength(2);
    const future = await graphql(ADMIN, GROUP_IDS, {
      filter: { from: new Date(Date.now() + 3_600_000).toISOString() },
    });
    expect(ids(future)).toEqual([]);
    const past = await graphql(ADMIN, GROUP_IDS, {
      filter: { to: new Date(Date.now() + 3_600_000).toISOString(), kind: 'SERVICE_FEE' },
    });
    expect(ids(past)).toEqual([posted.aliceFee]);
  });
});

describe('operator mutations', () => {
  const TRANSFER = `mutation($input: TreasuryTransferInput!) {
    recordTreasuryTransfer(input: $input) {
      sourceGroup { id kind asset { id } entries { accountKey amountAtomic } }
      destinationGroup { id kind asset { id } entries { accountKey amountAtomic } }
    }
  }`;
  const REVERSE = `mutation($groupId: ID!, $reason: String!, $key: String!) {
    reverseLedgerGroup(groupId: $groupId, reason: $reason, idempotencyKey: $key) { id kind memo reverses { id } entries { amountAtomic } }
  }`;
  const input = {
    sourceAsset: USDT0,
    sourceAmountAtomic: '1000',
    destinationAsset: USDC,
    destinationAmountAtomic: '998',
    idempotencyKey: 'replenish:1',
    memo: 'top up the Base float',
  };

  it('records a treasury transfer pair for an admin, idempotently, and audits each attempt', async () => {
    const first = await graphql(ADMIN, TRANSFER, { input });
    expect(first.errors).toBeUndefined();
    const { sourceGroup, destinationGroup } = first.data.recordTreasuryTransfer;
    expect(sourceGroup.entries).toEqual([
      { accountKey: accountId('CROSS_RAIL_CLEARING', USDT0, 'eip155-8453'), amountAtomic: '1000' },
      { accountKey: treasuryAccount(USDT0), amountAtomic: '-1000' },
    ]);
    expect(destinationGroup.entries).toEqual([
      { accountKey: treasuryAccount(USDC), amountAtomic: '998' },
      { accountKey: accountId('CROSS_RAIL_CLEARING', USDC, 'eip155-196'), amountAtomic: '-998' },
    ]);
    const again = await graphql(ADMIN, TRANSFER, { input });
    expect(again.data.recordTreasuryTransfer.sourceGroup.id).toBe(sourceGroup.id);
    const audit = await db.pool.query<{
      actor: string;
      action: string;
      result: { ok: boolean; sourceGroupId: string };
    }>(
      "SELECT actor, action, result FROM ledger.operator_actions WHERE action = 'TREASURY_TRANSFER' ORDER BY action_id",
    );
    expect(audit.rows.map((row) => [row.actor, row.result.ok, row.result.sourceGroupId])).toEqual([
      ['admin', true, sourceGroup.id],
      ['admin', true, sourceGroup.id],
    ]);
  });

  it('refuses operator mutations to owners and anonymous callers, and posts nothing', async () => {
    const before = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM ledger.groups');
    expect(
      (
        await graphql(owner(ALICE), TRANSFER, {
          input: { ...input, idempotencyKey: 'replenish:owner' },
        })
      ).errors?.[0].extensions.code,
    ).toBe('FORBIDDEN');
    expect(
      (await graphql(null, REVERSE, { groupId: posted.bobFunding, reason: 'x', key: 'r:anon' }))
        .errors?.[0].extensions.code,
    ).toBe('AUTH_REQUIRED');
    const after = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM ledger.groups');
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it('reverses a group for an admin, refuses a second reversal with the ledger code, and audits both', async () => {
    const reversed = await graphql(ADMIN, REVERSE, {
      groupId: posted.handedOver,
      reason: 'funded the wrong policy',
      key: 'reverse:handed-over',
    });
    expect(reversed.errors).toBeUndefined();
    expect(reversed.data.reverseLedgerGroup).toMatchObject({
      kind: 'REVERSAL',
      memo: 'funded the wrong policy',
      reverses: { id: posted.handedOver },
      entries: [{ amountAtomic: '-1000' }, { amountAtomic: '1000' }],
    });
    const twice = await graphql(ADMIN, REVERSE, {
      groupId: posted.handedOver,
      reason: 'again',
      key: 'reverse:handed-over:2',
    });
    expect(twice.errors?.[0].extensions.code).toBe('LEDGER_ALREADY_REVERSED');
    const audit = await db.pool.query<{ result: { ok: boolean; code?: string } }>(
      "SELECT result FROM ledger.operator_actions WHERE action = 'REVERSE_GROUP' ORDER BY action_id",
    );
    expect(audit.rows.map((row) => row.result.ok)).toEqual([true, false]);
    expect(audit.rows[1].result.code).toBe('LEDGER_ALREADY_REVERSED');
    const bad = await graphql(ADMIN, TRANSFER, {
      input: { ...input, sourceAmountAtomic: '-5', idempotencyKey: 'replenish:bad' },
    });
    expect(bad.errors?.[0].extensions.code).toBe('REQUEST_INVALID');
  });
});
