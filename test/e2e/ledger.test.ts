// The ledger through the gateway, as an operator and as owners would use it: the audited operator
// routes (treasury transfer pair, reversal) over REST with the admin token, retried safely; and the
// money of a policy read in one federated query, where each owner sees only their own.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { policyDocument } from '../../core/test-support/spend-fixtures';
import { assetId } from '../../subgraphs/ledger';
import { postFunding, registerAsset } from '../../subgraphs/ledger';
import { signIn } from '../support/siwe';
import { graphql, startTestStack, type TestStack, postJson } from '../support/stack';

const USDT0 = {
  chain: 'eip155:196',
  token: '0x779ded0c9e1022225f8e0630b35a9b54be713736',
  symbol: 'USDT0',
  decimals: 6,
};
const USDC = {
  chain: 'eip155:8453',
  token: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
  symbol: 'USDC',
  decimals: 6,
};
const FUNDING_ASSET = assetId(USDT0.chain, USDT0.token);
const SETTLEMENT_ASSET = assetId(USDC.chain, USDC.token);

function post(
  stack: TestStack,
  path: string,
  body: unknown,
  token?: string,
): Promise<{ status: number; body: any }> {
  return postJson(stack.url, path, body, token);
}

const POLICY_MONEY = `query ($id: ID!) {
  policy(id: $id) { id owner ledgerGroups(first: 10) { nodes { id kind policyId entries { accountKind amountAtomic } } } }
}`;

describe('ledger through the gateway', () => {
  let stack: TestStack;
  const alice = privateKeyToAccount(generatePrivateKey());
  const bob = privateKeyToAccount(generatePrivateKey());
  let alicePolicy: string;
  let bobPolicy: string;

  beforeAll(async () => {
    stack = await startTestStack();
    await registerAsset(stack.db.pool, USDT0);
    await registerAsset(stack.db.pool, USDC);
    for (const [account, assign] of [
      [alice, (id: string) => (alicePolicy = id)],
      [bob, (id: string) => (bobPolicy = id)],
    ] as const) {
      const created = await post(
        stack,
        '/create_spend_policy',
        { policy: policyDocument({ owner: account.address }) },
        stack.adminToken,
      );
      expect(created.status).toBe(201);
      assign(created.body.policyId);
    }
    // Funding is posted by the payment paths inside their own transactions; here it is the fixture.
    await postFunding(stack.db.pool, {
      asset: FUNDING_ASSET,
      amountAtomic: 50_250n,
      policyId: alicePolicy,
      intentRef: `0x${'a1'.repeat(32)}`,
      idempotencyKey: 'fund-alice',
    });
    await postFunding(stack.db.pool, {
      asset: FUNDING_ASSET,
      amountAtomic: 70_000n,
      policyId: bobPolicy,
      intentRef: `0x${'b0'.repeat(32)}`,
      idempotencyKey: 'fund-bob',
    });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('records a float replenishment as a TREASURY_TRANSFER pair, once per idempotency key', async () => {
    const request = {
      sourceAsset: FUNDING_ASSET,
      sourceAmountAtomic: '1000000',
      destinationAsset: SETTLEMENT_ASSET,
      destinationAmountAtomic: '998000',
      idempotencyKey: 'replenish-2026-11-22',
      memo: 'weekly float top-up',
    };
    const first = await post(stack, '/ledger/treasury_transfer', request, stack.adminToken);
    expect(first.status).toBe(200);
    const { sourceGroup, destinationGroup } = first.body;
    expect(sourceGroup.kind).toBe('TREASURY_TRANSFER');
    expect(destinationGroup.kind).toBe('TREASURY_TRANSFER');
    expect(sourceGroup.asset.id).toBe(FUNDING_ASSET);
    expect(destinationGroup.asset.id).toBe(SETTLEMENT_ASSET);
    for (const group of [sourceGroup, destinationGroup]) {
      const sum = group.entries.reduce(
        (total: bigint, entry: { amountAtomic: string }) => total + BigInt(entry.amountAtomic),
        0n,
      );
      expect(sum).toBe(0n);
      expect(group.entries.map((entry: { accountKind: string }) => entry.accountKind)).toEqual(
        expect.arrayContaining(['TREASURY', 'CROSS_RAIL_CLEARING']),
      );
    }

    const retried = await post(stack, '/ledger/treasury_transfer', request, stack.adminToken);
    expect(retried.status).toBe(200);
    expect([retried.body.sourceGroup.id, retried.body.destinationGroup.id]).toEqual([
      sourceGroup.id,
      destinationGroup.id,
    ]);

    const trial = await graphql(
      stack.url,
      '{ trialBalance { asset { id } netAtomic balanced } }',
      {},
      stack.adminToken,
    );
    expect(trial.body.errors).toBeUndefined();
    expect(
      trial.body.data.trialBalance.map((line: { asset: { id: string } }) => line.asset.id).sort(),
    ).toEqual([FUNDING_ASSET, SETTLEMENT_ASSET].sort());
    for (const line of trial.body.data.trialBalance)
      expect(line).toMatchObject({ netAtomic: '0', balanced: true });
  });

  it('refuses the operator routes without the admin token, and malformed bodies before any posting', async () => {
    const anonymous = await post(stack, '/ledger/reverse_group', {
      groupId: 'lg_000000000000000000000000',
      reason: 'x',
      idempotencyKey: 'k',
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe('ADMIN_AUTH_REQUIRED');
    const malformed = await post(
      stack,
      '/ledger/reverse_group',
      { groupId: 42, extra: true },
      stack.adminToken,
    );
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('REQUEST_INVALID');
    expect(malformed.body.details).toEqual(
      expect.arrayContaining([
        { field: 'extra', reason: 'unknown field' },
        { field: 'groupId', reason: 'must be a string' },
        { field: 'reason', reason: 'required' },
      ]),
    );
  });

  it('reverses a group with a visible REVERSAL, once', async () => {
    const groups = await graphql(
      stack.url,
      '{ ledgerGroups(filter: { kind: FUNDING }, first: 10) { nodes { id policyId } } }',
      {},
      stack.adminToken,
    );
    expect(groups.body.errors).toBeUndefined();
    const bobFunding = groups.body.data.ledgerGroups.nodes.find(
      (node: { policyId: string }) => node.policyId === bobPolicy,
    );
    const reversal = await post(
      stack,
      '/ledger/reverse_group',
      { groupId: bobFunding.id, reason: 'duplicate funding', idempotencyKey: 'rev-1' },
      stack.adminToken,
    );
    expect(reversal.status).toBe(200);
    expect(reversal.body).toMatchObject({
      kind: 'REVERSAL',
      reverses: { id: bobFunding.id, kind: 'FUNDING' },
    });
    const again = await post(
      stack,
      '/ledger/reverse_group',
      { groupId: bobFunding.id, reason: 'duplicate funding', idempotencyKey: 'rev-2' },
      stack.adminToken,
    );
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('LEDGER_ALREADY_REVERSED');
  });

  it('shows each owner the money of their own policy, in one federated query, and never another owner’s', async () => {
    const aliceToken = await signIn(stack.url, alice);
    const own = await graphql(stack.url, POLICY_MONEY, { id: alicePolicy }, aliceToken);
    expect(own.body.errors).toBeUndefined();
    expect(own.body.data.policy.owner).toBe(alice.address.toLowerCase());
    const nodes = own.body.data.policy.ledgerGroups.nodes;
    expect(nodes).toEqual([
      expect.objectContaining({
        kind: 'FUNDING',
        policyId: alicePolicy,
        entries: expect.arrayContaining([
          { accountKind: 'USER_OBLIGATION', amountAtomic: '-50250' },
        ]),
      }),
    ]);

    const foreign = await graphql(stack.url, POLICY_MONEY, { id: bobPolicy }, aliceToken);
    // Another owner's policy resolves to nothing at all: no owner, no money.
    expect(foreign.body.data?.policy ?? null).toBeNull();
    const listed = await graphql(
      stack.url,
      '{ ledgerGroups(first: 50) { nodes { policyId } } }',
      {},
      aliceToken,
    );
    expect(listed.body.errors).toBeUndefined();
    const policies = new Set(
      listed.body.data.ledgerGroups.nodes.map((node: { policyId: string }) => node.policyId),
    );
    expect([...policies]).toEqual([alicePolicy]);

    const anonymous = await graphql(stack.url, '{ ledgerGroups(first: 5) { nodes { id } } }');
    expect(anonymous.body.errors?.[0].extensions?.code).toBe('AUTH_REQUIRED');
  });
});
