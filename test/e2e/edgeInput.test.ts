// Anonymous input at the edge, as an attacker sends it: broken percent-encoding, JSON the service
// cannot carry (lone surrogates, NUL, 1e400, deep nesting), requests Node's parser refuses, HEAD,
// and bodies in other media types. Each is a 4xx with the documented error body and a code; none
// reaches a 500, and none on a paid route is ever charged. x402 is on (devnet).
import net from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { policyDocument } from '../../core/test-support/spend-fixtures';
import { type DevnetChains, startDevnetChains } from '../../devnet/chains';
import { buildRoutes } from '../../gateway/rest/routes';
import { createChainPublicClient, createChainWalletClient } from '../../platform/chain/clients';
import { mintToken, readTokenBalance } from '../../platform/chain/tokens';
import { challengeOf, signedPaymentHeader } from '../../devnet/agents/x402Payer';
import { insertConsumerIntent } from '../../subgraphs/intent/consumer/store';
import { startTestStack, type TestStack } from '../support/stack';

const POLLING = { pollingIntervalMs: 20 };
const ROUTES = buildRoutes();
const PAID_POSTS = ROUTES.filter(
  (route) => route.price.kind === 'paid' && route.method === 'POST',
).map((route) => route.path);
/**
 * Routes for signed-in callers, and those that offer a payment only to a reader of the record
 * named (ADMIN_ASKS), are asked by an admin (anyone else would be refused first).
 */
function bearerFor(path: string, token: string): Record<string, string> {
  const route = ROUTES.find((candidate) => candidate.path === path && candidate.method === 'POST');
  return route?.auth === 'public' && !ADMIN_ASKS.has(path)
    ? {}
    : { authorization: `Bearer ${token}` };
}
/** A body each paid POST accepts, so the route answers its challenge. */
const VALID_BODIES: Record<string, unknown> = {
  '/preflight_payment': { policyId: '1', intentHash: `0x${'ab'.repeat(32)}` },
  '/detect_duplicate': { policyId: '1', intentHash: `0x${'ab'.repeat(32)}` },
  '/redact_payment_metadata': { metadata: {} },
  '/cafe/order/latte': {},
  '/reconcile_agent_spend': {
    policyId: '1',
    from: '2026-11-01T00:00:00Z',
    to: '2026-11-22T00:00:00Z',
  },
  '/builder/suggest_names': { idea: 'coffee roasting' },
  '/builder/brand_pack': { idea: 'coffee roasting' },
  '/verify_delivery': {
    capability: 'travel.book',
    params: { from: 'AMS' },
    providerAttested: { status: 'ATTESTED', fields: { booked: true } },
  },
  '/generate_dispute_packet': { intentId: `ci_${'e1'.repeat(12)}` },
  // beforeAll gives both a scoreable history (too little is refused before any 402).
  '/score_vendor': { provider: 'vendor.example' },
  '/score_buyer': { agentId: 'agent-1', policyId: '1' },
};
/** Paid POSTs offered a payment only to a caller who may read the record named: asked as an admin. */
const ADMIN_ASKS: ReadonlySet<string> = new Set(['/generate_dispute_packet', '/score_buyer']);

let devnet: DevnetChains;
let stack: TestStack;
const payer = privateKeyToAccount(generatePrivateKey());

function expectErrorBody(body: any, code: string): void {
  expect(body).toEqual({
    code,
    message: expect.any(String),
    retryable: expect.any(Boolean),
    docsUrl: `http://127.0.0.1/docs/errors.md#${code.toLowerCase()}`,
    correlationId: expect.stringMatching(/^cor_[0-9a-f]{16}$/),
    ...(body?.details !== undefined ? { details: body.details } : {}),
  });
}

async function send(
  path: string,
  init: RequestInit & { admin?: boolean } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers = new Headers(init.headers);
  if (init.admin) headers.set('authorization', `Bearer ${stack.adminToken}`);
  const response = await fetch(`${stack.url}${path}`, { ...init, headers });
  const text = await response.text();
  return {
    status: response.status,
    body: text === '' ? null : JSON.parse(text),
    headers: response.headers,
  };
}

/** A raw HTTP/1.1 exchange: what Node's parser answers before Express sees anything. */
function rawExchange(request: string): Promise<{ status: number; headers: string; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(stack.stack.gateway.port, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, body] = [
        data.slice(0, data.indexOf('\r\n\r\n')),
        data.slice(data.indexOf('\r\n\r\n') + 4),
      ];
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        // Not JSON: the assertion on the body reports it.
      }
      resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: parsed });
    });
  });
}

async function charges(): Promise<number> {
  const { rows } = await stack.db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM ledger.service_payments WHERE payer = $1',
    [payer.address.toLowerCase()],
  );
  return rows[0]!.n;
}

beforeAll(async () => {
  devnet = await startDevnetChains({ dataDir: null });
  const funding = devnet.info.chains.funding;
  const publicClient = createChainPublicClient(funding, POLLING);
  await mintToken({
    publicClient,
    minter: createChainWalletClient(funding, devnet.keys.deployer.account, POLLING),
    token: funding.token.address,
    to: payer.address,
    amountAtomic: 10_000_000n,
  });
  stack = await startTestStack({ x402: { devnet } });
  await insertConsumerIntent(stack.db.pool, {
    intentId: `ci_${'e1'.repeat(12)}`,
    policyId: '1',
    wallet: payer.address,
    capability: 'domains.check',
    provider: 'spendctl-domains',
    category: 'domains',
    params: { domain: 'edge.test' },
    idempotencyKey: null,
    now: new Date(),
  });
  await stack.db.pool.query(
    "INSERT INTO intent.trust_vendor_outcomes (provider, verified, first_seen_at) VALUES ('vendor.example', 5, now())",
  );
  await stack.db.pool.query(
    "INSERT INTO intent.trust_buyer_outcomes (policy_id, agent_id, verified, first_seen_at) VALUES (1, 'agent-1', 5, now())",
  );
});

afterAll(async () => {
  await stack?.stop();
  await devnet?.stop();
});

describe('broken percent-encoding in a path', () => {
  it.each(
    ['/receipt_status/', '/escalation_status/'].flatMap((base) =>
      ['%zz', '%ff', '%', '%C0%AE'].map((tail) => `${base}${tail}`),
    ),
  )('GET %s is 400 REQUEST_INVALID', async (path) => {
    const { status, body } = await send(path);
    expect(status).toBe(400);
    expectErrorBody(body, 'REQUEST_INVALID');
  });
});

describe('JSON the service cannot carry', () => {
  const surrogateBodies = [
    '{"policyId":"\\ud800"}',
    '{"policyId":"1","intent":{"note":"ok \\udc00"}}',
    '{"metadata":{"list":["a","\\ud800"]}}',
    '{"cupName":"\\ud83d"}',
    '{"metadata":{"\\ud800":"key"}}',
  ];

  it.each(PAID_POSTS)(
    'a lone surrogate anywhere in a body of paid POST %s is 400 and never charged',
    async (path) => {
      for (const text of surrogateBodies) {
        const unpaid = await fetch(`${stack.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...bearerFor(path, stack.adminToken) },
          body: JSON.stringify(VALID_BODIES[path]),
        });
        const header = await signedPaymentHeader(challengeOf(unpaid), payer);
        const { status, body } = await send(path, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'payment-signature': header,
            ...bearerFor(path, stack.adminToken),
          },
          body: text,
        });
        expect(status).toBe(400);
        expectErrorBody(body, 'REQUEST_INVALID');
        expect(body.details).toEqual([
          { field: expect.any(String), reason: expect.stringMatching(/lone surrogate/) },
        ]);
      }
      expect(await charges()).toBe(0);
    },
  );

  it('a NUL in the query of the paid GET /ping_service is 400 and never charged', async () => {
    const header = await signedPaymentHeader(
      challengeOf(await fetch(`${stack.url}/ping_service`)),
      payer,
    );
    const { status, body } = await send('/ping_service?note=a%00b', {
      headers: { 'payment-signature': header },
    });
    expect(status).toBe(400);
    expect(body.details).toEqual([{ field: 'query.note', reason: 'contains a NUL character' }]);
    expect(await charges()).toBe(0);
  });

  it('redact_payment_metadata: nesting past the limit and 1e400 are 400; the deepest allowed nesting is priced', async () => {
    const nest = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    for (const metadata of [
      nest(63),
      nest(32),
      '{"amount":1e400}',
      '{"amount":-1e400}',
      '[[1e999]]',
    ]) {
      const { status, body } = await send('/redact_payment_metadata', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"metadata":${metadata}}`,
      });
      expect(status).toBe(400);
      expectErrorBody(body, 'REQUEST_INVALID');
    }
    const deepest = await fetch(`${stack.url}/redact_payment_metadata`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"metadata":${nest(31)}}`,
    });
    expect(deepest.status).toBe(402);
  });

  it.each([
    ['/pause_policy', { policyId: '1\u0000' }],
    ['/update_policy', { policyId: '1', policy: { name: 'x\u0000' } }],
    ['/sync_policy_registration', { policyId: '1', txHash: `0x${'a'.repeat(63)}\u0000` }],
    [
      '/ledger/reverse_group',
      { groupId: `lg_${'0'.repeat(24)}`, reason: 'typo\u0000', idempotencyKey: 'k' },
    ],
    [
      '/ledger/treasury_transfer',
      {
        sourceAsset: 'a',
        sourceAmountAtomic: '1',
        destinationAsset: 'b',
        destinationAmountAtomic: '1',
        idempotencyKey: 'k\u0000',
        memo: 'm',
      },
    ],
    ['/create_spend_policy', { policy: policyDocument({ name: 'nul \u0000 name' }) }],
  ])('a NUL in the admin route %s is 400, not a database error', async (path, payload) => {
    const { status, body } = await send(path, {
      method: 'POST',
      admin: true,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payload),
    });
    expect(status).toBe(400);
    expectErrorBody(body, 'REQUEST_INVALID');
    expect(body.details[0].reason).toBe('contains a NUL character');
  });
});

describe('requests Node’s HTTP layer refuses', () => {
  it.each([
    ['an unknown method', 'FROB /catalog HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'REQUEST_INVALID'],
    [
      'a 32 KiB URL',
      `GET /${'a'.repeat(32 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      431,
      'REQUEST_HEADERS_TOO_LARGE',
    ],
    [
      'a broken Content-Length',
      'POST /log_receipt HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n',
      400,
      'REQUEST_INVALID',
    ],
    [
      'a CONNECT tunnel',
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
      400,
      'REQUEST_INVALID',
    ],
    [
      'HTTP/1.1 without a Host',
      'GET /catalog HTTP/1.1\r\nConnection: close\r\n\r\n',
      400,
      'REQUEST_INVALID',
    ],
  ])('answers %s with the error body', async (_what, request, status, code) => {
    const answer = await rawExchange(request);
    expect(answer.status).toBe(status);
    expect(answer.headers).toContain('content-type: application/json; charset=utf-8');
    expectErrorBody(answer.body, code);
    expect(answer.headers).toContain(`x-correlation-id: ${answer.body.correlationId}`);
  });
});

describe('HEAD', () => {
  it('a HEAD the parser refuses is answered with the headers only, so a keep-alive client reads one answer', async () => {
    const answer = await rawExchange('HEAD /docs/\u00f7%zz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers).toContain('content-type: application/json; charset=utf-8');
    expect(Number(/content-length: (\d+)/.exec(answer.headers)?.[1])).toBeGreaterThan(0);
    expect(answer.body).toBe('');
  });

  it('is GET without a body on free routes, 404/405 with their headers elsewhere', async () => {
    const catalog = await fetch(`${stack.url}/catalog`, { method: 'HEAD' });
    expect(catalog.status).toBe(200);
    expect(catalog.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(catalog.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await catalog.text()).toBe('');
    const missing = await fetch(`${stack.url}/nope`, { method: 'HEAD' });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-correlation-id')).toMatch(/^cor_/);
    const postOnly = await fetch(`${stack.url}/pause_policy`, { method: 'HEAD' });
    expect(postOnly.status).toBe(405);
    expect(postOnly.headers.get('allow')).toBe('POST');
  });

  it('shows a paid GET route’s challenge and never takes the payment it carries', async () => {
    const funding = devnet.info.chains.funding;
    const before = await readTokenBalance(
      createChainPublicClient(funding, POLLING),
      funding.token.address,
      payer.address,
    );
    const header = await signedPaymentHeader(
      challengeOf(await fetch(`${stack.url}/ping_service`)),
      payer,
    );
    const head = await fetch(`${stack.url}/ping_service`, {
      method: 'HEAD',
      headers: { 'payment-signature': header },
    });
    expect(head.status).toBe(402);
    expect(challengeOf(head).accepts[0]!.amount).toBe('10000');
    expect(await charges()).toBe(0);
    expect(
      await readTokenBalance(
        createChainPublicClient(funding, POLLING),
        funding.token.address,
        payer.address,
      ),
    ).toBe(before);
    // The same authorization still pays for the GET it was signed for.
    const paid = await fetch(`${stack.url}/ping_service`, {
      headers: { 'payment-signature': header },
    });
    expect(paid.status).toBe(200);
    expect(await charges()).toBe(1);
  });
});

describe('media types', () => {
  const POSTS = ROUTES.filter((route) => route.method === 'POST').map((route) => route.path);
  const refused: Array<[string, string | null]> = [
    ['text/plain', 'text/plain'],
    ['form', 'application/x-www-form-urlencoded'],
    ['XML', 'application/xml'],
    ['no content type', null],
    ['JSON in UTF-16', 'application/json; charset=utf-16'],
    ['JSON in Latin-1', 'application/json;charset="iso-8859-1"'],
    ['a JSON suffix type', 'application/merge-patch+json'],
  ];

  it.each(POSTS)(
    'POST %s answers 415 to a body that is not application/json in UTF-8',
    async (path) => {
      for (const [, type] of refused) {
        const headers: Record<string, string> = type === null ? {} : { 'content-type': type };
        // A byte body: fetch adds no Content-Type of its own.
        const { status, body } = await send(path, {
          method: 'POST',
          admin: true,
          headers,
          body: new TextEncoder().encode('{"policyId":"1"}'),
        });
        expect([path, type, status]).toEqual([path, type, 415]);
        expectErrorBody(body, 'UNSUPPORTED_MEDIA_TYPE');
      }
    },
  );

  it('create_spend_policy: a policy sent as text/plain creates nothing; as application/json (any case of utf-8) it is created', async () => {
    const count = async () =>
      (await stack.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM policy.policies'))
        .rows[0]!.n;
    const before = await count();
    const document = JSON.stringify({
      policy: policyDocument({ owner: privateKeyToAccount(generatePrivateKey()).address }),
    });
    expect(
      (
        await send('/create_spend_policy', {
          method: 'POST',
          admin: true,
          headers: { 'content-type': 'text/plain' },
          body: document,
        })
      ).status,
    ).toBe(415);
    expect(await count()).toBe(before);
    const created = await send('/create_spend_policy', {
      method: 'POST',
      admin: true,
      headers: { 'content-type': 'Application/JSON; Charset=UTF-8' },
      body: document,
    });
    expect(created.status).toBe(201);
    expect(await count()).toBe(before + 1);
  });

  it('a POST without a body needs no Content-Type: it is an empty body', async () => {
    const nonce = await send('/consumer/auth/nonce', { method: 'POST' });
    expect(nonce.status).toBe(200);
    const missing = await send('/pause_policy', { method: 'POST', admin: true });
    expect(missing.status).toBe(400);
    expectErrorBody(missing.body, 'POLICY_ID_REQUIRED');
  });
});
