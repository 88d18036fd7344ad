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

interface Operation {
  query?: string;
  extensions?: { persistedQuery?: { sha256Hash: string } };
  actor?: string;
}

interface Seen {
  body: Operation & { operations?: Operation[] };
  actor: string | undefined;
}

let server: http.Server;
let url: string;
const seen: Seen[] = [];
const known = new Map<string, string>();
let answer: { status: number; body: string } | null = null;
/** When set, a batch that accepts lines is answered by this (the request's operations, the response). */
let lines: ((operations: Operation[], response: http.ServerResponse) => void) | null = null;

/** As Apollo Server answers: the query by its hash once it has seen the text, else not found. */
function echo(operation: Operation): Record<string, unknown> {
  const hash = operation.extensions?.persistedQuery?.sha256Hash;
  if (operation.query !== undefined && hash !== undefined) known.set(hash, operation.query);
  const query = operation.query ?? (hash === undefined ? undefined : known.get(hash));
  return query === undefined
    ? { errors: [{ message: 'PersistedQueryNotFound' }] }
    : { data: { echo: query } };
}

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
      if (body.operations !== undefined && lines !== null) {
        expect(request.headers.accept).toContain('application/x-ndjson');
        response.setHeader('content-type', 'application/x-ndjson; charset=utf-8');
        lines(body.operations, response);
        return;
      }
      if (body.operations !== undefined) {
        const answers = body.operations.map((operation) => ({
          status: 200,
          result: { ...echo(operation), actor: operation.actor },
        }));
        response.end(JSON.stringify({ answers }));
        return;
      }
      response.end(JSON.stringify(echo(body)));
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
  lines = null;
});

function options(
  query: string,
  signedActor = 'signed-actor',
): GraphQLDataSourceProcessOptions<GatewayContext> {
  return {
    request: { query, variables: { a: 1 } },
    context: { signedActor, correlationId: 'cor_1' },
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

it('sends concurrent operations to one subgraph as one request, each answer to its caller and each actor with its operation', async () => {
  const client = createSubgraphClient();
  try {
    const source = client.dataSource(url);
    const query = '{ batched }';
    await source.process(options(query)); // the subgraph learns the query text
    seen.length = 0;
    const answers = await Promise.all(
      ['actor-a', 'actor-b', 'actor-c'].map((actor) => source.process(options(query, actor))),
    );
    expect(seen).toHaveLength(1);
    expect(seen[0].actor).toBeUndefined();
    expect(seen[0].body.operations?.map((operation) => operation.actor)).toEqual([
      'actor-a',
      'actor-b',
      'actor-c',
    ]);
    expect(seen[0].body.operations?.every((operation) => operation.query === undefined)).toBe(true);
    expect(answers).toEqual(
      ['actor-a', 'actor-b', 'actor-c'].map((actor) => ({ data: { echo: query }, actor })),
    );
  } finally {
    await client.close();
  }
});

it('fails every operation of a batch the subgraph refuses as a whole', async () => {
  const client = createSubgraphClient();
  try {
    const source = client.dataSource(url);
    answer = { status: 400, body: JSON.stringify({ errors: [{ message: 'bad batch' }] }) };
    const failures = await Promise.all(
      ['{ one }', '{ two }'].map((query) =>
        source.process(options(query)).catch((error: unknown) => error),
      ),
    );
    expect(seen).toHaveLength(1);
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(GraphQLError);
      expect((failure as GraphQLError).extensions).toMatchObject({ response: { status: 400 } });
    }
  } finally {
    await client.close();
  }
});

/** The line a subgraph writes for the operation at `index`. */
function line(operations: Operation[], index: number): string {
  return `${JSON.stringify({ index, status: 200, result: { ...echo(operations[index]), actor: operations[index].actor } })}\n`;
}

it('resolves each operation of a batch when its own answer line arrives, in whatever order, not when the batch ends', async () => {
  const client = createSubgraphClient();
  let finish!: () => void;
  try {
    const source = client.dataSource(url);
    const query = '{ streamed }';
    await source.process(options(query)); // the subgraph learns the query text
    seen.length = 0;
    lines = (operations, response) => {
      response.write(line(operations, 2));
      // The first line split across two writes, the third's newline in the second.
      const first = line(operations, 0);
      response.write(first.slice(0, 7));
      setTimeout(() => response.write(first.slice(7)), 20);
      finish = () => response.end(line(operations, 1));
    };
    const pending = ['actor-a', 'actor-b', 'actor-c'].map((actor) =>
      source.process(options(query, actor)),
    );
    expect(await pending[2]).toEqual({ data: { echo: query }, actor: 'actor-c' });
    expect(await pending[0]).toEqual({ data: { echo: query }, actor: 'actor-a' });
    // Both answered while the request is still open: the second's line has not been written.
    let secondSettled = false;
    void pending[1].finally(() => (secondSettled = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(secondSettled).toBe(false);
    finish();
    expect(await pending[1]).toEqual({ data: { echo: query }, actor: 'actor-b' });
    expect(seen).toHaveLength(1); // the three left as one request
  } finally {
    await client.close();
  }
});

it('fails an operation the subgraph leaves unanswered, and after a malformed line every one not yet answered', async () => {
  const client = createSubgraphClient();
  try {
    const source = client.dataSource(url);
    const query = '{ partly }';
    await source.process(options(query));
    lines = (operations, response) => response.end(line(operations, 1));
    const [left, answered] = await Promise.all(
      ['actor-a', 'actor-b'].map((actor) =>
        source.process(options(query, actor)).catch((error: unknown) => error),
      ),
    );
    expect(answered).toEqual({ data: { echo: query }, actor: 'actor-b' });
    expect(left).toBeInstanceOf(Error);
    expect((left as Error).message).toMatch(/left 1 unanswered/);

    for (const malformed of ['not json', '{"index":7,"status":200}', '{"index":0}']) {
      lines = (operations, response) => {
        response.write(line(operations, 0));
        response.end(`${malformed}\n${line(operations, 1)}`);
      };
      const [first, second] = await Promise.all(
        ['actor-a', 'actor-b'].map((actor) =>
          source.process(options(query, actor)).catch((error: unknown) => error),
        ),
      );
      expect(first).toEqual({ data: { echo: query }, actor: 'actor-a' });
      expect(second).toBeInstanceOf(SubgraphTransportError);
      expect((second as Error).message).toMatch(/malformed answer line/);
    }
  } finally {
    await client.close();
  }
});
