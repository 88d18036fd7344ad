import { createHmac, randomBytes } from 'node:crypto';
import type { ApolloServer } from '@apollo/server';
import type { DataSource } from 'typeorm';
import { Ctx, Field, ObjectType, Query, Resolver } from 'type-graphql';
import { AppError } from '../../core/errors';
import { ACTOR_HEADER, type Actor, signActor } from '../../platform/actor';
import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';
import { createContextFactory, settingsOf } from './context';
import { buildFederatedSchema } from './federation';
import {
  CORRELATION_HEADER,
  createSubgraphServer,
  executeInProcess,
  startSubgraphHttp,
  type SubgraphHttpHandle,
} from './server';
import type { SubgraphContext, SubgraphModule } from './types';

const SECRET = randomBytes(32);
const SECRET_MARKER = 'hunter2-connection-string';

/** What kitWaitsForGate waits for; a test replaces it and calls `open`. */
let gate = { opened: Promise.resolve(), open: () => undefined as void };
function closedGate(): typeof gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

@ObjectType()
class KitProbe {
  @Field()
  actorKind!: string;

  @Field()
  correlationId!: string;

  @Field()
  database!: string;

  @Field(() => String, { nullable: true })
  publicUrl!: string | null;

  @Field()
  consumerAuthRequired!: boolean;

  @Field(() => String, { nullable: true })
  registry!: string | null;

  @Field(() => String, { nullable: true })
  paidRoute!: string | null;
}

@Resolver()
class KitProbeResolver {
  @Query(() => KitProbe)
  async kitProbe(@Ctx() ctx: SubgraphContext): Promise<KitProbe> {
    const result = await ctx.db.query<{ name: string }>('SELECT current_database() AS name');
    return {
      actorKind: ctx.actor.kind,
      correlationId: ctx.correlationId,
      database: result.rows[0].name,
      publicUrl: settingsOf(ctx).publicUrl,
      consumerAuthRequired: settingsOf(ctx).consumerAuthRequired,
      registry: ctx.chains?.funding.policyRegistry ?? null,
      paidRoute: ctx.paidRoute ?? null,
    };
  }

  /** Answers only once the test opens `gate` (an operation that is slow on purpose). */
  @Query(() => String)
  async kitWaitsForGate(): Promise<string> {
    await gate.opened;
    return 'through';
  }

  @Query(() => String)
  kitFailsInternally(): string {
    throw new Error(`could not connect with ${SECRET_MARKER}`);
  }

  @Query(() => String)
  kitRefusesOnPurpose(): string {
    throw new AppError('POLICY_NOT_FOUND', undefined, { policyId: '7' });
  }
}

// Borrows the ledger's name only because a module must carry a SubgraphName; it is never composed.
const probeModule: SubgraphModule = {
  name: 'ledger',
  buildSchema: () => buildFederatedSchema({ resolvers: [KitProbeResolver] }),
};

let db: TestDatabase;
let server: ApolloServer<SubgraphContext>;
let http: SubgraphHttpHandle;
const internalErrors: Array<{ error: unknown; correlationId: string }> = [];

beforeAll(async () => {
  db = await createTestDatabase({ subgraphs: [] });
  server = await createSubgraphServer(probeModule, {
    db: db.pool,
    actorSecret: SECRET,
    onInternalError: (error, correlationId) => internalErrors.push({ error, correlationId }),
  });
  http = await startSubgraphHttp(server, { host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await http?.stop();
  await server?.stop();
  await db?.drop();
});

beforeEach(() => {
  internalErrors.length = 0;
});

async function post(
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; json: any }> {
  const response = await fetch(http.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) };
}

const PROBE = '{ kitProbe { actorKind correlationId database } }';

describe('actor verification', () => {
  test('over HTTP, a signed actor reaches the resolver with the database and the correlation id', async () => {
    const response = await post(
      { query: PROBE },
      {
        [ACTOR_HEADER]: signActor({ kind: 'admin' }, SECRET),
        [CORRELATION_HEADER]: 'cor_0123456789abcdef',
      },
    );
    expect(response.status).toBe(200);
    expect(response.json.data.kitProbe).toEqual({
      actorKind: 'admin',
      correlationId: 'cor_0123456789abcdef',
      database: db.name,
    });
  });

  test('a request without an actor header is anonymous and gets a fresh correlation id', async () => {
    const response = await post({ query: PROBE });
    expect(response.json.data.kitProbe.actorKind).toBe('anonymous');
    expect(response.json.data.kitProbe.correlationId).toMatch(/^cor_[0-9a-f]{16}$/);
  });

  test.each([
    ['signed with another secret', () => signActor({ kind: 'admin' }, randomBytes(32))],
    ['stale', () => signActor({ kind: 'admin' }, SECRET, Date.now() - 10 * 60_000)],
    ['malformed', () => 'admin'],
  ])(
    'over HTTP, an actor header %s is refused with 401 AUTH_REQUIRED and nothing runs',
    async (_case, header) => {
      const response = await post({ query: PROBE }, { [ACTOR_HEADER]: header() });
      expect(response.status).toBe(401);
      expect(response.json.data).toBeUndefined();
      expect(response.json.errors).toHaveLength(1);
      expect(response.json.errors[0].message).toBe('The signed actor header was refused.');
      expect(response.json.errors[0].extensions).toMatchObject({
        code: 'AUTH_REQUIRED',
        status: 401,
        retryable: false,
      });
    },
  );

  test('in-process, a forged actor header is refused exactly as over HTTP', async () => {
    const forged = signActor({ kind: 'admin' }, randomBytes(32));
    const result = await executeInProcess(server, { query: PROBE }, { actorHeader: forged });
    expect(result.data).toBeUndefined();
    expect(result.errors?.[0]).toMatchObject({
      message: 'The signed actor header was refused.',
      extensions: {
        code: 'AUTH_REQUIRED',
        status: 401,
        retryable: false,
        details: { reason: 'bad signature' },
      },
    });
  });

  test('in-process, a signed owner reaches the resolver as that owner', async () => {
    const owner: Actor = { kind: 'owner', address: `0x${'12'.repeat(20)}` };
    const result = await executeInProcess(
      server,
      { query: PROBE },
      { actorHeader: signActor(owner, SECRET) },
    );
    expect(result.errors).toBeUndefined();
    expect((result.data as { kitProbe: { actorKind: string } }).kitProbe.actorKind).toBe('owner');
  });

  test('a paid-call claim reaches the resolver only as the gateway signed it', async () => {
    const probe = (actorHeader: string) =>
      executeInProcess(server, { query: '{ kitProbe { actorKind paidRoute } }' }, { actorHeader });
    const paid = await probe(
      signActor({ kind: 'anonymous' }, SECRET, Date.now(), 'POST /preflight_payment'),
    );
    expect(paid.data).toEqual({
      kitProbe: { actorKind: 'anonymous', paidRoute: 'POST /preflight_payment' },
    });
    expect((await probe(signActor({ kind: 'admin' }, SECRET))).data).toEqual({
      kitProbe: { actorKind: 'admin', paidRoute: null },
    });
    // The claim added to an unpaid header's payload breaks its signature.
    const [, mac] = signActor({ kind: 'anonymous' }, SECRET).split('.');
    const claims = {
      actor: { kind: 'anonymous' },
      iat: Math.floor(Date.now() / 1000),
      paidRoute: 'POST /preflight_payment',
    };
    const grafted = await probe(
      `${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${mac}`,
    );
    expect(grafted.errors?.[0].extensions).toMatchObject({
      code: 'AUTH_REQUIRED',
      details: { reason: 'bad signature' },
    });
    // A claim that names no route is refused even when signed.
    const odd = Buffer.from(JSON.stringify({ ...claims, paidRoute: { route: 'x' } })).toString(
      'base64url',
    );
    const signedOdd = await probe(
      `${odd}.${createHmac('sha256', SECRET).update(odd).digest('base64url')}`,
    );
    expect(signedOdd.errors?.[0].extensions).toMatchObject({
      code: 'AUTH_REQUIRED',
      details: { reason: 'unknown paid route shape' },
    });
  });

  test('a server is never built with a short actor secret', async () => {
    await expect(
      createSubgraphServer(probeModule, { db: db.pool, actorSecret: randomBytes(16) }),
    ).rejects.toThrow(/at least 32 bytes/);
  });
});

describe('errors leaving a subgraph', () => {
  test('an unexpected error becomes INTERNAL_ERROR with a correlation id, no message leak and no stack', async () => {
    const response = await post(
      { query: '{ kitFailsInternally }' },
      { [CORRELATION_HEADER]: 'cor_00000000000000aa' },
    );
    expect(response.status).toBe(200);
    expect(response.json.errors).toEqual([
      {
        message: 'An internal error occurred; quote the correlation id.',
        locations: [{ line: 1, column: 3 }],
        path: ['kitFailsInternally'],
        extensions: {
          code: 'INTERNAL_ERROR',
          status: 500,
          retryable: true,
          correlationId: 'cor_00000000000000aa',
        },
      },
    ]);
    expect(response.text).not.toContain(SECRET_MARKER);
    expect(response.text).not.toMatch(/stacktrace|\.ts:\d+/);
    expect(internalErrors).toHaveLength(1);
    expect(internalErrors[0].correlationId).toBe('cor_00000000000000aa');
    expect(String((internalErrors[0].error as Error).message)).toContain(SECRET_MARKER);
  });

  test('in-process, an unexpected error is hidden the same way', async () => {
    const result = await executeInProcess(server, { query: '{ kitFailsInternally }' });
    expect(JSON.stringify(result)).not.toContain(SECRET_MARKER);
    expect(result.errors?.[0].extensions).toMatchObject({
      code: 'INTERNAL_ERROR',
      status: 500,
      retryable: true,
    });
    expect(result.errors?.[0].extensions?.stacktrace).toBeUndefined();
  });

  test('an AppError keeps its code, status, retryability, message and details', async () => {
    const response = await post({ query: '{ kitRefusesOnPurpose }' });
    expect(response.json.errors[0]).toMatchObject({
      message: 'No policy with this id.',
      extensions: {
        code: 'POLICY_NOT_FOUND',
        status: 404,
        retryable: false,
        details: { policyId: '7' },
      },
    });
    expect(internalErrors).toEqual([]);
  });

  test('a document that does not validate is GRAPHQL_VALIDATION_FAILED, not an internal error', async () => {
    const response = await post({ query: '{ kitProbe { nope } }' });
    expect(response.status).toBe(400);
    expect(response.json.errors[0].extensions).toEqual({
      code: 'GRAPHQL_VALIDATION_FAILED',
      status: 400,
      retryable: false,
    });
    expect(internalErrors).toEqual([]);
  });

  test('transport failures answer in the same error shape: bad JSON, oversized body, unknown path', async () => {
    const badJson = await post('{"query": ');
    expect(badJson.status).toBe(400);
    expect(badJson.json.errors[0].extensions.code).toBe('BODY_NOT_JSON');

    const oversized = await post({ query: PROBE, padding: 'x'.repeat(3 * 1024 * 1024) });
    expect(oversized.status).toBe(413);
    expect(oversized.json.errors[0].extensions.code).toBe('BODY_TOO_LARGE');

    const elsewhere = await fetch(http.url.replace('/graphql', '/elsewhere'));
    expect(elsewhere.status).toBe(404);
    const body = (await elsewhere.json()) as { errors: Array<{ extensions: { code: string } }> };
    expect(body.errors[0].extensions.code).toBe('ROUTE_NOT_FOUND');
  });
});

describe('operations the gateway batches into one request', () => {
  test('each is answered in order as its own request would be: its actor, its correlation id, its refusal', async () => {
    const response = await post({
      operations: [
        {
          query: PROBE,
          actor: signActor({ kind: 'admin' }, SECRET),
          correlationId: 'cor_00000000000000b1',
        },
        { query: PROBE, actor: signActor({ kind: 'admin' }, randomBytes(32)) },
        { query: '{ kitProbe { nope } }' },
        { query: PROBE },
      ],
    });
    expect(response.status).toBe(200);
    const [signed, forged, invalid, anonymous] = response.json.answers;
    expect(signed.status).toBe(200);
    expect(signed.result.data.kitProbe).toEqual({
      actorKind: 'admin',
      correlationId: 'cor_00000000000000b1',
      database: db.name,
    });
    expect(forged.status).toBe(401);
    expect(forged.result.data).toBeUndefined();
    expect(forged.result.errors[0].extensions).toMatchObject({ code: 'AUTH_REQUIRED' });
    expect(invalid.status).toBe(400);
    expect(invalid.result.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(anonymous.result.data.kitProbe.actorKind).toBe('anonymous');
  });

  test('a caller that accepts lines gets each answer as its operation finishes, never held behind a slower one', async () => {
    gate = closedGate();
    const actor = signActor({ kind: 'admin' }, SECRET);
    const response = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify({
        operations: [
          { query: '{ kitWaitsForGate }', actor },
          { query: PROBE, actor, correlationId: 'cor_00000000000000c2' },
          { query: '{ kitProbe { nope } }' },
        ],
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const reader = response.body!.getReader();
    let buffered = '';
    const nextLine = async (): Promise<any> => {
      for (;;) {
        const end = buffered.indexOf('\n');
        if (end !== -1) {
          const line = buffered.slice(0, end);
          buffered = buffered.slice(end + 1);
          return JSON.parse(line);
        }
        const { done, value } = await reader.read();
        if (done) return null;
        buffered += Buffer.from(value).toString('utf8');
      }
    };
    // The probe and the invalid operation are answered while the first still waits for its gate.
    const early = [await nextLine(), await nextLine()].sort((a, b) => a.index - b.index);
    expect(early[0]).toMatchObject({ index: 1, status: 200 });
    expect(early[0].result.data.kitProbe).toMatchObject({
      actorKind: 'admin',
      correlationId: 'cor_00000000000000c2',
    });
    expect(early[1]).toMatchObject({ index: 2, status: 400 });
    expect(early[1].result.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    gate.open();
    const last = await nextLine();
    expect(last).toMatchObject({ index: 0, status: 200 });
    expect(last.result).toEqual({ data: { kitWaitsForGate: 'through' } });
    expect(await nextLine()).toBeNull();
  });

  test('a batch that is empty, too long or not a list is refused whole as REQUEST_INVALID', async () => {
    const actor = signActor({ kind: 'admin' }, SECRET);
    for (const operations of [
      [],
      Array.from({ length: 65 }, () => ({ query: PROBE, actor })),
      'x',
    ]) {
      const response = await post({ operations });
      expect(response.status).toBe(400);
      expect(response.json.errors[0].extensions.code).toBe('REQUEST_INVALID');
      expect(response.json.answers).toBeUndefined();
    }
  });
});

test('deployment settings and chains reach the resolvers; a server without them gets the defaults', async () => {
  const registry = `0x${'34'.repeat(20)}` as const;
  const configured = await createSubgraphServer(probeModule, {
    db: db.pool,
    actorSecret: SECRET,
    chains: { funding: { chainId: 196, rpcUrl: 'http://127.0.0.1:1', policyRegistry: registry } },
    settings: { publicUrl: 'https://spend.example', consumerAuthRequired: false },
  });
  try {
    const query = '{ kitProbe { publicUrl consumerAuthRequired registry } }';
    expect((await executeInProcess(configured, { query })).data).toEqual({
      kitProbe: { publicUrl: 'https://spend.example', consumerAuthRequired: false, registry },
    });
    expect((await executeInProcess(server, { query })).data).toEqual({
      kitProbe: { publicUrl: null, consumerAuthRequired: true, registry: null },
    });
  } finally {
    await configured.stop();
  }
});

test('the process’s DataSource, when the deps carry one, reaches every request’s context', async () => {
  const dataSource = { isInitialized: true } as unknown as DataSource;
  const header = signActor({ kind: 'admin' }, SECRET);
  const withOne = createContextFactory({ db: db.pool, actorSecret: SECRET, dataSource });
  const without = createContextFactory({ db: db.pool, actorSecret: SECRET });
  expect(withOne({ actorHeader: header }).dataSource).toBe(dataSource);
  expect(without({ actorHeader: header }).dataSource).toBeUndefined();
});

test('the subgraph serves _service.sdl, which the gateway and composition read', async () => {
  const result = await executeInProcess(server, { query: '{ _service { sdl } }' });
  expect((result.data as { _service: { sdl: string } })._service.sdl).toContain(
    'kitProbe: KitProbe!',
  );
});
