// Spend policies end to end, as an operator (REST with the admin token) and as an owner (GraphQL
// with a SIWE owner session): create, read, update (new version and hash, the old one still
// readable), pause, resume; what happens without credentials and with another owner's session;
// and every kind of invalid document answered with POLICY_RULES_INVALID and its fields.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { policyHash as hashOf } from '../../core/canon/policy-identity';
import { policyDocument, rulesOf } from '../../core/test-support/spend-fixtures';
import { signIn } from '../support/siwe';
import { graphql, startTestStack, type TestStack, postJson } from '../support/stack';

const owner = privateKeyToAccount(generatePrivateKey());
const otherOwner = privateKeyToAccount(generatePrivateKey());
const OWNER = owner.address.toLowerCase();

function post(
  stack: TestStack,
  path: string,
  body: unknown,
  token?: string,
): Promise<{ status: number; body: any }> {
  return postJson(stack.url, path, body, token);
}

const VERSION =
  'query ($id: ID!, $v: Int!) { policyVersion(policyId: $id, version: $v) { version policyHash limits { dailyBudget } } }';

describe.each(['in-process', 'http'] as const)('operator routes with %s subgraphs', (transport) => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ transport });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('create, read, update, pause and resume a policy through REST with the admin token', async () => {
    const document = policyDocument({ owner: owner.address });
    const created = await post(
      stack,
      '/create_spend_policy',
      { policy: document },
      stack.adminToken,
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      policyId: expect.stringMatching(/^[0-9]{1,78}$/),
      owner: OWNER,
      ownerNonce: '1',
      name: 'research agent',
      version: 1,
      status: 'ACTIVE',
      state: 'ACTIVE',
      policyHash: hashOf(rulesOf(document)),
      expiresAt: '2027-12-31T00:00:00.000Z',
      rules: rulesOf(document),
      registration: null,
    });
    const { policyId } = created.body;

    const updated = await post(
      stack,
      '/update_policy',
      { policyId, policy: { ...document, dailyBudget: '40.00' } },
      stack.adminToken,
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ policyId, version: 2, status: 'ACTIVE' });
    expect(updated.body.policyHash).not.toBe(created.body.policyHash);

    const v1 = await graphql(stack.url, VERSION, { id: policyId, v: 1 }, stack.adminToken);
    expect(v1.body.data.policyVersion).toEqual({
      version: 1,
      policyHash: created.body.policyHash,
      limits: { dailyBudget: '25.00' },
    });

    const paused = await post(stack, '/pause_policy', { policyId }, stack.adminToken);
    expect([paused.status, paused.body.status, paused.body.version]).toEqual([200, 'PAUSED', 2]);
    const resumed = await post(stack, '/resume_policy', { policyId }, stack.adminToken);
    expect([resumed.status, resumed.body.status]).toEqual([200, 'ACTIVE']);

    const read = await graphql(
      stack.url,
      'query ($id: ID!) { policy(id: $id) { version status policyHash versions { version } } }',
      { id: policyId },
      stack.adminToken,
    );
    expect(read.body.data.policy).toEqual({
      version: 2,
      status: 'ACTIVE',
      policyHash: updated.body.policyHash,
      versions: [{ version: 2 }, { version: 1 }],
    });
  });

  it('refuses every operator route without the admin token (401), also with an owner session, and changes nothing', async () => {
    const created = await post(
      stack,
      '/create_spend_policy',
      { policy: policyDocument({ owner: owner.address }) },
      stack.adminToken,
    );
    const { policyId } = created.body;
    const ownerSession = await signIn(stack.url, owner);
    const calls: Array<[string, unknown]> = [
      ['/create_spend_policy', { policy: policyDocument({ owner: owner.address }) }],
      [
        '/update_policy',
        { policyId, policy: policyDocument({ owner: owner.address, dailyBudget: '99.00' }) },
      ],
      ['/pause_policy', { policyId }],
      ['/resume_policy', { policyId }],
      ['/sync_policy_registration', { policyId, txHash: `0x${'11'.repeat(32)}` }],
    ];
    for (const [path, body] of calls) {
      for (const token of [undefined, ownerSession]) {
        const answer = await post(stack, path, body, token);
        expect([path, answer.status, answer.body.code]).toEqual([path, 401, 'ADMIN_AUTH_REQUIRED']);
      }
    }
    const read = await graphql(
      stack.url,
      'query ($id: ID!) { policy(id: $id) { version status } }',
      { id: policyId },
      stack.adminToken,
    );
    expect(read.body.data.policy).toEqual({ version: 1, status: 'ACTIVE' });
  });
});

describe('the operator routes’ input', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack();
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ['perCallCap above dailyBudget', { perCallCap: '30.00' }, ['perCallCap']],
    ['escalateAbove above hardCap', { escalateAbove: '10.01' }, ['escalateAbove']],
    ['empty categories', { categories: { allow: [], deny: [] } }, ['categories.allow']],
    ['a bad address', { owner: '0x1234' }, ['owner']],
    ['an unknown field', { dailyBudgett: '1.00' }, ['dailyBudgett']],
    ['too many decimals', { perCallCap: '1.0000001' }, ['perCallCap']],
    [
      'several mistakes at once',
      {
        perCallCap: 2,
        recipients: { allow: ['nope'] },
        asset: { network: 'eip155:196', token: '0x1', symbol: 'USDT0', decimals: 6 },
      },
      ['asset.token', 'perCallCap', 'recipients.allow[0]'],
    ],
  ])(
    'answers %s with 400 POLICY_RULES_INVALID naming the fields',
    async (_case, overrides, fields) => {
      const answer = await post(
        stack,
        '/create_spend_policy',
        { policy: policyDocument({ owner: owner.address, ...overrides }) },
        stack.adminToken,
      );
      expect([answer.status, answer.body.code]).toEqual([400, 'POLICY_RULES_INVALID']);
      expect(answer.body.details.map((error: { field: string }) => error.field).sort()).toEqual(
        fields,
      );
    },
  );

  it('answers a missing policyId with 400 POLICY_ID_REQUIRED on every route that takes one', async () => {
    for (const [path, body] of [
      ['/update_policy', { policy: policyDocument({ owner: owner.address }) }],
      ['/pause_policy', {}],
      ['/resume_policy', { policyId: '' }],
      ['/sync_policy_registration', { txHash: `0x${'11'.repeat(32)}` }],
    ] as const) {
      const answer = await post(stack, path, body, stack.adminToken);
      expect([path, answer.status, answer.body.code]).toEqual([path, 400, 'POLICY_ID_REQUIRED']);
    }
  });

  it('answers unknown policies with 404, malformed bodies with 400, and registration without a registry with 503', async () => {
    const unknown = await post(stack, '/pause_policy', { policyId: '987654321' }, stack.adminToken);
    expect([unknown.status, unknown.body.code]).toEqual([404, 'POLICY_NOT_FOUND']);
    const extra = await post(
      stack,
      '/pause_policy',
      { policyId: '1', force: true },
      stack.adminToken,
    );
    expect([extra.status, extra.body.code, extra.body.details]).toEqual([
      400,
      'REQUEST_INVALID',
      [{ field: 'force', reason: 'unknown field' }],
    ]);
    const notObject = await post(
      stack,
      '/create_spend_policy',
      { policy: 'research agent' },
      stack.adminToken,
    );
    expect([notObject.status, notObject.body.code]).toEqual([400, 'REQUEST_INVALID']);
    const created = await post(
      stack,
      '/create_spend_policy',
      { policy: policyDocument({ owner: owner.address }) },
      stack.adminToken,
    );
    const sync = await post(
      stack,
      '/sync_policy_registration',
      { policyId: created.body.policyId, txHash: `0x${'11'.repeat(32)}` },
      stack.adminToken,
    );
    expect([sync.status, sync.body.code]).toEqual([503, 'POLICY_REGISTRY_NOT_CONFIGURED']);
  });
});

describe('an owner managing policies through GraphQL with a SIWE session', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack();
  });

  afterAll(async () => {
    await stack?.stop();
  });

  const FIELDS = 'id owner version status state policyHash';
  const CREATE = `mutation ($p: JSONObject!) { createPolicy(policy: $p) { ${FIELDS} } }`;
  const UPDATE = `mutation ($id: ID!, $p: JSONObject!) { updatePolicy(policyId: $id, policy: $p) { ${FIELDS} } }`;
  const PAUSE = `mutation ($id: ID!) { pausePolicy(policyId: $id) { ${FIELDS} } }`;
  const RESUME = `mutation ($id: ID!) { resumePolicy(policyId: $id) { ${FIELDS} } }`;
  const READ = `query ($id: ID!) { policy(id: $id) { ${FIELDS} versions { version policyHash } } }`;

  it('creates, reads, updates, pauses and resumes its own policy', async () => {
    const session = await signIn(stack.url, owner);
    const created = await graphql(
      stack.url,
      CREATE,
      { p: policyDocument({ owner: owner.address }) },
      session,
    );
    expect(created.body.errors).toBeUndefined();
    const policy = created.body.data.createPolicy;
    expect(policy).toMatchObject({ owner: OWNER, version: 1, status: 'ACTIVE' });

    const updated = await graphql(
      stack.url,
      UPDATE,
      { id: policy.id, p: policyDocument({ owner: owner.address, perCallCap: '3.00' }) },
      session,
    );
    expect(updated.body.data.updatePolicy).toMatchObject({ version: 2 });
    expect(updated.body.data.updatePolicy.policyHash).not.toBe(policy.policyHash);
    const v1 = await graphql(stack.url, VERSION, { id: policy.id, v: 1 }, session);
    expect(v1.body.data.policyVersion.policyHash).toBe(policy.policyHash);

    expect(
      (await graphql(stack.url, PAUSE, { id: policy.id }, session)).body.data.pausePolicy.status,
    ).toBe('PAUSED');
    expect(
      (await graphql(stack.url, RESUME, { id: policy.id }, session)).body.data.resumePolicy.status,
    ).toBe('ACTIVE');
    const read = await graphql(stack.url, READ, { id: policy.id }, session);
    expect(read.body.data.policy.versions).toEqual([
      { version: 2, policyHash: updated.body.data.updatePolicy.policyHash },
      { version: 1, policyHash: policy.policyHash },
    ]);
  });

  it('refuses each operation without credentials (AUTH_REQUIRED, 401) and with another owner’s session (404, or null for reads)', async () => {
    const session = await signIn(stack.url, owner);
    const policy = (
      await graphql(stack.url, CREATE, { p: policyDocument({ owner: owner.address }) }, session)
    ).body.data.createPolicy;
    const intruder = await signIn(stack.url, otherOwner);
    const writes: Array<[string, Record<string, unknown>]> = [
      [CREATE, { p: policyDocument({ owner: owner.address }) }],
      [UPDATE, { id: policy.id, p: policyDocument({ owner: owner.address, perCallCap: '3.00' }) }],
      [PAUSE, { id: policy.id }],
      [RESUME, { id: policy.id }],
    ];
    for (const [query, variables] of writes) {
      const anonymous = await graphql(stack.url, query, variables);
      expect(anonymous.body.errors?.[0].extensions).toMatchObject({
        code: 'AUTH_REQUIRED',
        status: 401,
      });
      expect(anonymous.body.data ?? null).toBeNull();
    }
    const intruderCreate = await graphql(
      stack.url,
      CREATE,
      { p: policyDocument({ owner: owner.address }) },
      intruder,
    );
    expect(intruderCreate.body.errors?.[0].extensions).toMatchObject({
      code: 'FORBIDDEN',
      status: 403,
    });
    for (const [query, variables] of writes.slice(1)) {
      const answer = await graphql(stack.url, query, variables, intruder);
      expect(answer.body.errors?.[0].extensions).toMatchObject({
        code: 'POLICY_NOT_FOUND',
        status: 404,
      });
      expect(JSON.stringify(answer.body)).not.toContain(policy.policyHash);
    }
    expect((await graphql(stack.url, READ, { id: policy.id })).body.data.policy).toBeNull();
    expect(
      (await graphql(stack.url, READ, { id: policy.id }, intruder)).body.data.policy,
    ).toBeNull();
    expect(
      (await graphql(stack.url, VERSION, { id: policy.id, v: 1 }, intruder)).body.data
        .policyVersion,
    ).toBeNull();
    expect(
      (await graphql(stack.url, READ, { id: policy.id }, session)).body.data.policy,
    ).toMatchObject({ version: 1, status: 'ACTIVE' });
  });
});
