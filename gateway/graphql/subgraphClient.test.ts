// The gateway's HTTP client to its subgraphs, against a real HTTP server on 127.0.0.1 that keeps
// persisted queries as Apollo Server does: the hash alone once the subgraph knows the query, the
// signed actor on every request, non-2xx answers and oversized bodies as errors.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { GraphQLError } from 'graphql';
import { ACTOR_HEADER } from '../../platform/actor';
import type { GatewayContext } from './context';
import { createSubgraphClient, SubgraphTransportError } from './subgraphClient';

interface Seen {
  body: { query?: string; extensions?: { persistedQuery?: { sha256Hash: string } } };
  actor: string | undefined;
}

let server: http.Server;
let url: string;
const seen: Seen[] = [];
const known = new Map<string, string>();
let answer: { status: number; body: string } | null = null;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Seen['body'];
      seen.push({ body, actor: request.headers[ACTOR_HEADER] as string | undefined });
      response.setHeader('content-type', 'application/json');
      if (answer !== null) {
        response.statusCode = answer.status;
        response.end(answer.body);
        return;
      }
      const hash = body.extensions?.persistedQuery?.sha256Hash;
      if (body.query !== undefined && hash !== undefined) known.set(hash, body.query);
      const query = body.query ?? (hash === undefined ? undefined : known.get(hash));
      response.end(
        JSON.stringify(
          query === undefined
            ? { errors: [{ message: 'PersistedQueryNotFound' }] }
            : { data: { echo: query } },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  seen.length = 0;
  answer = null;
});

function options(query: string): GraphQLDataSourceProcessOptions<GatewayContext> {
  return {
    request: { query, variables: { a: 1 } },
    context: { signedActor: 'signed-actor', correlationId: 'cor_1' },
  } as unknown as GraphQLDataSourceProcessOptions<GatewayContext>;
}

it('sends the query text once, then only its hash, with the signed actor every time', async () => {
  const client = createSubgraphClient();
  try {
    const source = client.dataSource(url);
    const query = '{ echo }';
    const hash = createHash('sha256').update(query).digest('hex');
    expect(await source.process(options(query))).toEqual({ data: { echo: query } });
    expect(seen.map((request) => request.body.query)).toEqual([undefined, query]);
    seen.length = 0;
    expect(await source.process(options(query))).toEqual({ data: { echo: query } });
    expect(seen).toHaveLength(1);
    expect(seen[0].body.query).toBeUndefined();
    expect(seen[0].body.extensions?.persistedQuery?.sha256Hash).toBe(hash);
    expect(seen[0].actor).toBe('signed-actor');
  } finally {
    await client.close();
  }
});

it('turns a non-2xx answer into an error carrying the status and body', async () => {
  const client = createSubgraphClient();
  try {
    answer = { status: 403, body: JSON.stringify({ errors: [{ message: 'no' }] }) };
    const failure = await client
      .dataSource(url)
      .process(options('{ denied }'))
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GraphQLError);
    expect((failure as GraphQLError).extensions).toMatchObject({
      code: 'FORBIDDEN',
      response: { status: 403, body: { errors: [{ message: 'no' }] } },
    });
  } finally {
    await client.close();
  }
});

it('refuses a response body over the size cap', async () => {
  const client = createSubgraphClient({ maxResponseBytes: 1_000 });
  try {
    answer = { status: 200, body: JSON.stringify({ data: { big: 'x'.repeat(5_000) } }) };
    await expect(client.dataSource(url).process(options('{ big }'))).rejects.toBeInstanceOf(
      SubgraphTransportError,
    );
  } finally {
    await client.close();
  }
});
