// Sign-in with Ethereum end to end: real keys sign real EIP-4361 messages, the gateway's routes run
// the policy subgraph's nonce and verification on a real database, and the bearers it mints are
// then used (and refused) on the consumer read and on GraphQL. One clock, injected into the
// gateway and the subgraphs, lets a test move 30 minutes ahead.
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { policyDocument } from '../../core/test-support/spend-fixtures';
import { postSignIn, requestNonce, signIn, signSignInMessage } from '../support/siwe';
import { graphql, startTestStack, type TestStack } from '../support/stack';

const T0 = new Date('2026-11-22T09:00:00.000Z');
let nowMs = T0.getTime();
const clock = () => new Date(nowMs);

const owner = privateKeyToAccount(generatePrivateKey());
const otherOwner = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());

async function createPolicy(
  stack: TestStack,
  account: PrivateKeyAccount,
): Promise<{ policyId: string; policyHash: string }> {
  const response = await fetch(`${stack.url}/create_spend_policy`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.adminToken}` },
    body: JSON.stringify({ policy: policyDocument({ owner: account.address }) }),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { policyId: string; policyHash: string };
}

async function consumerPolicy(
  stack: TestStack,
  bearer?: string,
  query = '',
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${stack.url}/consumer/policy${query}`, {
    headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` },
  });
  return { status: response.status, body: await response.json() };
}

describe('sign-in with a real database and real signatures', () => {
  let stack: TestStack;
  let policyId: string;
  let policyHash: string;
  let otherPolicyId: string;

  beforeAll(async () => {
    stack = await startTestStack({ now: clock });
    ({ policyId, policyHash } = await createPolicy(stack, owner));
    ({ policyId: otherPolicyId } = await createPolicy(stack, otherOwner));
  });

  afterAll(async () => {
    await stack?.stop();
  });

  beforeEach(() => {
    nowMs = T0.getTime();
  });

  function expectRefusal(answer: { status: number; body: any }, status: number, code: string) {
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status, code });
  }

  it('issues a fresh 16-byte nonce with the domain, chain id, statement and resource format to sign', async () => {
    const [first, second] = [await requestNonce(stack.url), await requestNonce(stack.url)];
    expect(first).toEqual({
      nonce: expect.stringMatching(/^[0-9a-f]{32}$/),
      issuedAt: T0.toISOString(),
      expiresAt: new Date(T0.getTime() + 10 * 60_000).toISOString(),
      domain: '127.0.0.1',
      uri: 'http://127.0.0.1',
      chainId: 196,
      version: '1',
      statement: 'Sign in to the Agent Spend-Control Service.',
      resourceFormat: 'svc:policy:<policyId>',
    });
    expect(second.nonce).not.toBe(first.nonce);
  });

  it('gives the policy owner a 30-minute consumer bearer bound to that policy, which reads it', async () => {
    const answer = await postSignIn(
      stack.url,
      '/consumer/auth/verify',
      await signSignInMessage(owner, await requestNonce(stack.url), { policyId }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      accessToken: expect.stringMatching(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/),
      tokenType: 'Bearer',
      session: 'consumer',
      address: owner.address.toLowerCase(),
      policyId,
      expiresAt: new Date(T0.getTime() + 30 * 60_000).toISOString(),
      expiresInSeconds: 1800,
    });
    const read = await consumerPolicy(stack, answer.body.accessToken);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      policyId,
      version: 1,
      status: 'ACTIVE',
      state: 'ACTIVE',
      policyHash,
      expiresAt: '2027-12-31T00:00:00.000Z',
      limits: {
        asset: {
          network: 'eip155:196',
          token: expect.stringMatching(/^0x[0-9a-f]{40}$/),
          symbol: 'USDT0',
          decimals: 6,
        },
        dailyBudget: '25.00',
        perCallCap: '2.00',
        onPerCallCapExceeded: 'BLOCK',
        hardCap: '10.00',
        escalateAbove: '1.00',
        maxDeadlineMinutes: 1440,
      },
    });
  });

  it('gives an owner session (no policy resource) that sees every policy of that address and no other', async () => {
    const bearer = await signIn(stack.url, owner);
    const { body } = await graphql(stack.url, '{ policies { nodes { id owner } } }', {}, bearer);
    expect(body.errors).toBeUndefined();
    expect(body.data.policies.nodes).toEqual([
      { id: policyId, owner: owner.address.toLowerCase() },
    ]);
    const others = await graphql(
      stack.url,
      'query ($id: ID!) { policy(id: $id) { id owner rules } }',
      { id: otherPolicyId },
      bearer,
    );
    expect(others.body.data.policy).toBeNull();
  });

  it.each<
    [
      string,
      (nonce: Awaited<ReturnType<typeof requestNonce>>) => Parameters<typeof signSignInMessage>[2],
    ]
  >([
    ['a wrong domain', () => ({ policyId, overrides: { domain: 'evil.example' } })],
    ['a wrong chain', () => ({ policyId, overrides: { chainId: 1 } })],
    ['a missing policy resource', () => ({})],
    [
      'two policy resources',
      () => ({
        policyId,
        overrides: { resources: [`svc:policy:${policyId}`, `svc:policy:${otherPolicyId}`] },
      }),
    ],
    [
      'an expired message',
      () => ({ policyId, overrides: { expirationTime: new Date(T0.getTime() - 1000) } }),
    ],
    [
      'a message not valid yet',
      () => ({ policyId, overrides: { notBefore: new Date(T0.getTime() + 60_000) } }),
    ],
    [
      'a message issued in the future',
      () => ({ policyId, issuedAt: new Date(T0.getTime() + 3600_000) }),
    ],
  ])('refuses %s with 401 SIWE_INVALID, and the nonce is burnt', async (_case, options) => {
    const nonce = await requestNonce(stack.url);
    expectRefusal(
      await postSignIn(
        stack.url,
        '/consumer/auth/verify',
        await signSignInMessage(owner, nonce, options(nonce)),
      ),
      401,
      'SIWE_INVALID',
    );
    const honest = await signSignInMessage(owner, nonce, { policyId });
    expectRefusal(
      await postSignIn(stack.url, '/consumer/auth/verify', honest),
      401,
      'SIWE_NONCE_INVALID',
    );
  });

  it('refuses a signature that is not the named address’s with 401 SIWE_INVALID', async () => {
    const nonce = await requestNonce(stack.url);
    const signed = await signSignInMessage(owner, nonce, { policyId });
    const forged = {
      message: signed.message,
      signature: await stranger.signMessage({ message: signed.message }),
    };
    expectRefusal(
      await postSignIn(stack.url, '/consumer/auth/verify', forged),
      401,
      'SIWE_INVALID',
    );
  });

  it('refuses a valid signature by an address that does not own the policy with 403 NOT_POLICY_OWNER', async () => {
    const answer = await postSignIn(
      stack.url,
      '/consumer/auth/verify',
      await signSignInMessage(stranger, await requestNonce(stack.url), { policyId }),
    );
    expectRefusal(answer, 403, 'NOT_POLICY_OWNER');
    const unknown = await postSignIn(
      stack.url,
      '/consumer/auth/verify',
      await signSignInMessage(stranger, await requestNonce(stack.url), { policyId: '123' }),
    );
    expectRefusal(unknown, 403, 'NOT_POLICY_OWNER');
  });

  it('refuses a policy resource on the owner route and an unknown or malformed nonce', async () => {
    expectRefusal(
      await postSignIn(
        stack.url,
        '/owner/auth/verify',
        await signSignInMessage(owner, await requestNonce(stack.url), { policyId }),
      ),
      401,
      'SIWE_INVALID',
    );
    const made = await requestNonce(stack.url);
    expectRefusal(
      await postSignIn(
        stack.url,
        '/owner/auth/verify',
        await signSignInMessage(owner, { ...made, nonce: 'ab'.repeat(16) }),
      ),
      401,
      'SIWE_NONCE_INVALID',
    );
    expectRefusal(
      await postSignIn(stack.url, '/owner/auth/verify', { message: 'hello', signature: '0x00' }),
      401,
      'SIWE_INVALID',
    );
  });

  it('refuses a replayed message: the nonce is single use', async () => {
    const signed = await signSignInMessage(owner, await requestNonce(stack.url), { policyId });
    expect((await postSignIn(stack.url, '/consumer/auth/verify', signed)).status).toBe(200);
    expectRefusal(
      await postSignIn(stack.url, '/consumer/auth/verify', signed),
      401,
      'SIWE_NONCE_INVALID',
    );
  });

  it('lets exactly one of 20 concurrent verifications of one signed message through', async () => {
    const signed = await signSignInMessage(owner, await requestNonce(stack.url), { policyId });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => postSignIn(stack.url, '/consumer/auth/verify', signed)),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(refused.map((answer) => `${answer.status} ${answer.body.code}`)).toEqual(
      Array(19).fill('401 SIWE_NONCE_INVALID'),
    );
  });

  it('refuses a nonce older than ten minutes', async () => {
    const nonce = await requestNonce(stack.url);
    nowMs += 10 * 60_000;
    expectRefusal(
      await postSignIn(
        stack.url,
        '/consumer/auth/verify',
        await signSignInMessage(owner, nonce, { policyId }),
      ),
      401,
      'SIWE_NONCE_INVALID',
    );
  });

  it('refuses a session used after 30 minutes with 401 SESSION_INVALID, and a tampered one', async () => {
    const bearer = await signIn(stack.url, owner, policyId);
    nowMs += 30 * 60_000 - 1000;
    expect((await consumerPolicy(stack, bearer)).status).toBe(200);
    nowMs += 1000;
    expectRefusal(await consumerPolicy(stack, bearer), 401, 'SESSION_INVALID');
    const owners = await graphql(stack.url, '{ policies { nodes { id } } }', {}, bearer);
    expect([owners.status, owners.body.errors?.[0].extensions?.code]).toEqual([
      401,
      'SESSION_INVALID',
    ]);
    nowMs = T0.getTime();
    const [prefix, payload, mac] = bearer.split('.');
    const middle = Math.floor(payload.length / 2);
    const tampered = `${prefix}.${payload.slice(0, middle)}${payload[middle] === 'A' ? 'B' : 'A'}${payload.slice(middle + 1)}.${mac}`;
    expectRefusal(await consumerPolicy(stack, tampered), 401, 'SESSION_INVALID');
  });

  describe('scope', () => {
    it('refuses a consumer read that only names a policyId, without a bearer: 401 AUTH_REQUIRED', async () => {
      expectRefusal(
        await consumerPolicy(stack, undefined, `?policyId=${policyId}`),
        401,
        'AUTH_REQUIRED',
      );
      expectRefusal(await consumerPolicy(stack), 401, 'AUTH_REQUIRED');
    });

    it('keeps a consumer session to its one policy: another is 403 FORBIDDEN, never its data', async () => {
      const bearer = await signIn(stack.url, owner, policyId);
      const elsewhere = await consumerPolicy(stack, bearer, `?policyId=${otherPolicyId}`);
      expectRefusal(elsewhere, 403, 'FORBIDDEN');
      expect(elsewhere.body).not.toHaveProperty('policyHash');
      expect((await consumerPolicy(stack, bearer, `?policyId=${policyId}`)).status).toBe(200);
      const viaGraphql = await graphql(
        stack.url,
        'query ($id: ID!) { policy(id: $id) { id } }',
        { id: otherPolicyId },
        bearer,
      );
      expect(viaGraphql.body.data.policy).toBeNull();
    });

    it('lets another owner’s session see none of this owner’s policies and change none of them', async () => {
      const bearer = await signIn(stack.url, otherOwner);
      const read = await graphql(
        stack.url,
        'query ($id: ID!) { policy(id: $id) { id policyHash } }',
        { id: policyId },
        bearer,
      );
      expect(read.body.data.policy).toBeNull();
      const pause = await graphql(
        stack.url,
        'mutation ($id: ID!) { pausePolicy(policyId: $id) { id status } }',
        { id: policyId },
        bearer,
      );
      expect(pause.body.errors?.[0].extensions).toMatchObject({
        code: 'POLICY_NOT_FOUND',
        status: 404,
      });
      expectRefusal(
        await consumerPolicy(stack, bearer, `?policyId=${policyId}`),
        404,
        'POLICY_NOT_FOUND',
      );
    });
  });
});

describe('with CONSUMER_AUTH_REQUIRED=0', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ consumerAuthRequired: false });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('serves a consumer read that names a policyId without a bearer, and still needs one or the other', async () => {
    const { policyId, policyHash } = await createPolicy(stack, owner);
    const read = await consumerPolicy(stack, undefined, `?policyId=${policyId}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ policyId, policyHash, status: 'ACTIVE' });
    const nothing = await consumerPolicy(stack);
    expect([nothing.status, nothing.body.code]).toEqual([401, 'AUTH_REQUIRED']);
    const unknown = await consumerPolicy(stack, undefined, '?policyId=5');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'POLICY_NOT_FOUND']);
  });
});
