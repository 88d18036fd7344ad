// The foundation through its public surface: GraphQL across subgraphs, the REST layer, errors,
// live subscriptions over a real websocket, on both transports the gateway can use.
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { graphql, startTestStack, type TestStack } from '../support/stack';

const SET_PROVIDER = `mutation Promote($id: ID!, $maturity: Maturity!, $reason: String!) {
  setProviderMaturity(id: $id, maturity: $maturity, reason: $reason) { id maturity }
}`;
const SET_CAPABILITY = `mutation SetCap($id: ID!, $maturity: Maturity!, $reason: String!) {
  setCapabilityMaturity(id: $id, maturity: $maturity, reason: $reason) { id maturity effectiveMaturity executable }
}`;

function wsClient(stack: TestStack, authorization?: string): Client {
  return createClient({
    url: stack.wsUrl,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    connectionParams: authorization ? { authorization } : {},
  });
}

interface CatalogChange {
  kind: string;
  id: string | null;
  maturity: string | null;
}

/** Subscribes and resolves with the first event matching `match` (after `ready` resolves the subscription is live). */
function nextCatalogChange(client: Client, match: (change: CatalogChange) => boolean) {
  let unsubscribe: () => void = () => undefined;
  const received = new Promise<CatalogChange>((resolve, reject) => {
    unsubscribe = client.subscribe<{ catalogChanged: CatalogChange }>(
      { query: 'subscription { catalogChanged { kind id maturity changedAt } }' },
      {
        next: (message) => {
          const change = message.data?.catalogChanged;
          if (change && match(change)) resolve(change);
        },
        error: reject,
        complete: () => undefined,
      },
    );
  });
  return { received, unsubscribe: () => unsubscribe() };
}

async function waitForSubscribers(stack: TestStack, count: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (stack.stack.gateway.fanout.listenerCount('catalogChanged') < count) {
    if (Date.now() > deadline) throw new Error('subscription never became live');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each(['in-process', 'http'] as const)('gateway with %s subgraphs', (transport) => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ transport });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('plans one GraphQL query across the catalog and builder subgraphs', async () => {
    const { status, body } = await graphql(
      stack.url,
      '{ capability(id: "domains.check") { id effectiveMaturity executable provider { id maturity } builderTools { path method } } }',
    );
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data.capability).toEqual({
      id: 'domains.check',
      effectiveMaturity: 'VERIFIED',
      executable: true,
      provider: { id: 'spendctl-domains', maturity: 'VERIFIED' },
      builderTools: expect.arrayContaining([
        { path: '/builder/check_domains', method: 'POST' },
        { path: '/builder/brand_pack', method: 'POST' },
      ]),
    });
  });

  it('serves the consumer catalog with maturities and exactly one executable provider', async () => {
    const response = await fetch(`${stack.url}/consumer/catalog`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as any;
    expect(body.execution).toEqual({ providersExecutableToday: ['spendctl-domains'] });
    expect(body.maturityOrder).toEqual(['experimental', 'sandbox', 'verified']);
    const check = body.capabilities.find((c: { id: string }) => c.id === 'domains.check');
    expect(check).toMatchObject({
      maturity: 'verified',
      effectiveMaturity: 'verified',
      executable: true,
      refusalCode: null,
    });
    const register = body.capabilities.find((c: { id: string }) => c.id === 'domains.register');
    expect(register).toMatchObject({ executable: false, refusalCode: 'DOMAIN_REGISTRATION_GATED' });
    expect(body.gatedRails).toEqual(
      expect.arrayContaining([
        { rail: 'solana', refusalCode: 'SOLANA_SETTLEMENT_GATED' },
        { rail: 'tempo', refusalCode: 'TEMPO_SETTLEMENT_GATED' },
      ]),
    );
  });

  it('pushes catalogChanged to a websocket subscriber after an admin promotion, and the REST catalog follows', async () => {
    const client = wsClient(stack);
    try {
      const change = nextCatalogChange(client, (c) => c.id === 'spendctl-travel');
      await waitForSubscribers(stack, 1);
      const promoted = await graphql(
        stack.url,
        SET_PROVIDER,
        { id: 'spendctl-travel', maturity: 'VERIFIED', reason: 'e2e' },
        stack.adminToken,
      );
      expect(promoted.body.errors).toBeUndefined();
      await expect(change.received).resolves.toEqual({
        kind: 'PROVIDER',
        id: 'spendctl-travel',
        maturity: 'VERIFIED',
        changedAt: expect.any(String),
      });
      change.unsubscribe();

      const body = (await (await fetch(`${stack.url}/consumer/catalog`)).json()) as any;
      const travel = body.providers.find((p: { id: string }) => p.id === 'spendctl-travel');
      expect(travel.maturity).toBe('verified');
      const search = body.capabilities.find((c: { id: string }) => c.id === 'travel.search');
      expect(search).toMatchObject({
        maturity: 'sandbox',
        effectiveMaturity: 'sandbox',
        executable: false,
      });
      expect(body.execution.providersExecutableToday).toEqual(['spendctl-domains']);
    } finally {
      await client.dispose();
    }
  });

  it('refuses catalog mutations from anyone but an admin', async () => {
    const anonymous = await graphql(stack.url, SET_CAPABILITY, {
      id: 'domains.check',
      maturity: 'SANDBOX',
      reason: 'no',
    });
    expect(anonymous.body.errors?.[0].extensions?.code).toBe('AUTH_REQUIRED');
    const wrongToken = await graphql(
      stack.url,
      SET_CAPABILITY,
      { id: 'domains.check', maturity: 'SANDBOX', reason: 'no' },
      'not-the-admin-token',
    );
    expect(wrongToken.status).toBe(401);
    expect(wrongToken.body.errors?.[0].extensions?.code).toBe('SESSION_INVALID');
    const still = await graphql(stack.url, '{ capability(id: "domains.check") { maturity } }');
    expect(still.body.data.capability.maturity).toBe('VERIFIED');
  });
});

describe('gateway edge behaviour', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ bodyLimitBytes: 1024 });
  });

  afterAll(async () => {
    await stack?.stop();
  });

  function expectErrorBody(body: any, code: string) {
    expect(body).toEqual({
      code,
      message: expect.any(String),
      retryable: expect.any(Boolean),
      docsUrl: `http://127.0.0.1/docs/errors.md#${code.toLowerCase()}`,
      correlationId: expect.stringMatching(/^cor_[0-9a-f]{16}$/),
      ...(body.details !== undefined ? { details: body.details } : {}),
    });
  }

  it('answers an unknown path with a 404 error body', async () => {
    const response = await fetch(`${stack.url}/no/such/route`);
    expect(response.status).toBe(404);
    expectErrorBody(await response.json(), 'ROUTE_NOT_FOUND');
  });

  it('answers a wrong method with 405 and an Allow header', async () => {
    const response = await fetch(`${stack.url}/consumer/catalog`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    expectErrorBody(await response.json(), 'METHOD_NOT_ALLOWED');
  });

  it('answers broken JSON with 400 BODY_NOT_JSON and an oversized body with 413', async () => {
    const broken = await fetch(`${stack.url}/catalog`, {
      method: 'POST',
      body: '{"a":',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(400);
    expectErrorBody(await broken.json(), 'BODY_NOT_JSON');
    const large = await fetch(`${stack.url}/catalog`, {
      method: 'POST',
      body: JSON.stringify({ padding: 'x'.repeat(4096) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(large.status).toBe(413);
    expectErrorBody(await large.json(), 'BODY_TOO_LARGE');
  });

  it('generates the service map and OpenAPI document from the route table', async () => {
    const map = (await (await fetch(`${stack.url}/catalog`)).json()) as any;
    expect(map.payment).toMatchObject({ protocol: 'x402', x402Version: 2, network: 'eip155:196' });
    const paths = map.routes.map(
      (route: { method: string; path: string }) => `${route.method} ${route.path}`,
    );
    expect(paths).toEqual(
      expect.arrayContaining([
        'GET /catalog',
        'GET /consumer/catalog',
        'GET /.well-known/agent-registration.json',
      ]),
    );
    const openapi = (await (await fetch(`${stack.url}/openapi.json`)).json()) as any;
    expect(openapi.openapi).toBe('3.1.0');
    // OpenAPI writes path parameters as {name} where the route table writes :name.
    const openapiPath = (path: string): string =>
      path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
    expect(Object.keys(openapi.paths).sort()).toEqual(
      [...new Set(map.routes.map((route: { path: string }) => openapiPath(route.path)))].sort(),
    );
    expect(openapi.paths['/consumer/catalog'].get['x-price']).toEqual({ kind: 'free' });
  });

  it('serves the same registration-v1 card at both identity paths', async () => {
    const plain = (await (await fetch(`${stack.url}/agent-registration.json`)).json()) as any;
    const wellKnown = (await (
      await fetch(`${stack.url}/.well-known/agent-registration.json`)
    ).json()) as any;
    expect(plain).toEqual(wellKnown);
    expect(plain).toMatchObject({
      type: 'https://eips.ethereum.org/EIPS/eip-8004#registration-v1',
      name: 'Agent Spend-Control Service (test)',
      x402Support: true,
      active: true,
      registrations: [],
    });
    expect(plain.services).toEqual(
      expect.arrayContaining([{ name: 'graphql', endpoint: 'http://127.0.0.1/graphql' }]),
    );
  });

  it('reports health, readiness and metrics', async () => {
    expect((await fetch(`${stack.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${stack.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      ready: true,
      checks: { database: 'ok', notifications: 'ok' },
    });
    const metrics = await (await fetch(`${stack.url}/metrics`)).text();
    expect(metrics).toMatch(
      /http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/,
    );
  });

  it('rejects a query deeper than the limit before any subgraph runs', async () => {
    let selection = 'id';
    for (let level = 0; level < 6; level += 1)
      selection = `capabilities { provider { ${selection} } }`;
    const { status, body } = await graphql(
      stack.url,
      `{ provider(id: "spendctl-domains") { ${selection} } }`,
    );
    expect(status).toBe(400);
    expect(body.errors?.[0].extensions?.code).toBe('GRAPHQL_QUERY_TOO_DEEP');
  });

  it('returns validation errors without stack traces', async () => {
    const { status, body } = await graphql(stack.url, '{ catalog { noSuchField } }');
    expect(status).toBe(400);
    expect(body.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(JSON.stringify(body)).not.toMatch(/stacktrace|\.ts:\d+/);
  });

  it('closes a websocket that presents an unknown credential with 4403', async () => {
    const closed = new Promise<number>((resolve) => {
      const socket = new WebSocket(stack.wsUrl, 'graphql-transport-ws');
      socket.on('open', () =>
        socket.send(
          JSON.stringify({ type: 'connection_init', payload: { authorization: 'Bearer nope' } }),
        ),
      );
      socket.on('close', (code) => resolve(code));
    });
    await expect(closed).resolves.toBe(4403);
  });

  it('accepts an admin bearer on the websocket', async () => {
    const client = wsClient(stack, `Bearer ${stack.adminToken}`);
    try {
      const change = nextCatalogChange(client, (c) => c.id === 'domains.dns');
      await waitForSubscribers(stack, 1);
      await graphql(
        stack.url,
        SET_CAPABILITY,
        { id: 'domains.dns', maturity: 'SANDBOX', reason: 'e2e' },
        stack.adminToken,
      );
      await expect(change.received).resolves.toMatchObject({
        kind: 'CAPABILITY',
        id: 'domains.dns',
        maturity: 'SANDBOX',
      });
      change.unsubscribe();
    } finally {
      await client.dispose();
    }
  });
});
