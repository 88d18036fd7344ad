// How the gateway reaches subgraphs over HTTP (the split deployment): undici's keep-alive agent
// (bounded connections, timeouts, a response size cap) driven by a bare dispatch handler that
// buffers the body, and automatic persisted queries so each request carries the hash of its query
// rather than its text. The signed actor and correlation id go on every request, and with tracing
// on the W3C traceparent of the hop's span. This replaces
// @apollo/gateway's RemoteGraphQLDataSource, whose per-request fetch objects (Headers, Request)
// cost more than the hop itself (see docs/architecture.md).
import { createHash } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { GraphQLDataSource, GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { GatewayGraphQLResponse } from '@apollo/server-gateway-interface';
import { GraphQLError } from 'graphql';
import { Agent, type Dispatcher } from 'undici';
import { ACTOR_HEADER, CORRELATION_HEADER } from '../../platform/actor';
import { inClientSpan, tracingActive } from '../../platform/tracing';
import type { GatewayContext } from './context';
import { type BatchedAnswer, type BatchedOperation, SubgraphBatcher } from './subgraphBatch';

export const SUBGRAPH_TIMEOUT_MS = 15_000;
export const SUBGRAPH_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
export const SUBGRAPH_MAX_CONNECTIONS = 64;
/** Below the subgraph server's keep-alive timeout (65 s), so the client closes an idle socket first. */
const KEEP_ALIVE_MS = 30_000;
/** Query texts whose hashes are remembered; the supergraph's fetch nodes are far fewer. */
const HASHES_KEPT = 2_000;

export class SubgraphTransportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SubgraphTransportError';
  }
}

interface SubgraphReply {
  status: number;
  statusText: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** Whether the body went to `onLine` line by line instead (post's `onLine`); it is then empty. */
  streamed: boolean;
}

/** The media type of a batch answered line by line (subgraphs/kit/operationHttp.ts). */
const NDJSON = 'application/x-ndjson';
const NEWLINE = 0x0a;

/**
 * One POST through the agent, the whole body buffered (the agent caps its size). With `onLine`, a
 * 2xx answer of type application/x-ndjson is not buffered: each complete line goes to `onLine` as
 * it arrives (a line that throws aborts the request with that error) and the reply says `streamed`.
 */
function post(
  agent: Dispatcher,
  url: URL,
  headers: Record<string, string>,
  body: string,
  onLine?: (line: Buffer) => void,
): Promise<SubgraphReply> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let reply: Omit<SubgraphReply, 'body' | 'streamed'> = {
      status: 0,
      statusText: '',
      headers: {},
    };
    let lines: ((chunk: Buffer) => void) | null = null;
    let failed = false;
    const fail = (error: Error) => {
      failed = true;
      reject(error);
    };
    agent.dispatch(
      { origin: url.origin, path: url.pathname + url.search, method: 'POST', headers, body },
      {
        // undici takes a handler as one of its newer kind (these on…(controller, …) methods) by this one.
        onRequestStart() {},
        onResponseStart(_controller, status, responseHeaders, statusText) {
          reply = { status, statusText: statusText ?? '', headers: responseHeaders };
          const type = headerOf(reply, 'content-type') ?? '';
          if (onLine && status >= 200 && status < 300 && type.startsWith(NDJSON))
            lines = lineSplitter(onLine);
        },
        onResponseData(controller, chunk) {
          if (lines === null) return void chunks.push(chunk);
          try {
            lines(chunk);
          } catch (error) {
            controller.abort(error as Error);
          }
        },
        onResponseEnd() {
          if (lines !== null) {
            try {
              lines(Buffer.from([NEWLINE])); // a last line without its newline is a line too
            } catch (error) {
              return fail(error as Error);
            }
          }
          const whole = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
          resolve({ ...reply, body: whole, streamed: lines !== null });
        },
        onResponseError(_controller, error) {
          if (!failed)
            fail(
              error instanceof SubgraphTransportError
                ? error
                : new SubgraphTransportError(`subgraph ${url.origin}: ${error.message}`),
            );
        },
      },
    );
  });
}

/** Feeds chunks, hands on each complete non-empty line (a newline never occurs inside UTF-8). */
function lineSplitter(onLine: (line: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer | null = null;
  return (chunk) => {
    let data = pending === null ? chunk : Buffer.concat([pending, chunk]);
    pending = null;
    for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE)) {
      if (end > 0) onLine(data.subarray(0, end));
      data = data.subarray(end + 1);
    }
    if (data.length > 0) pending = data;
  };
}

function headerOf(reply: Pick<SubgraphReply, 'headers'>, name: string): string | undefined {
  const value = reply.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The body as JSON when it says so, else as text (RemoteGraphQLDataSource's reading). */
function bodyOf(reply: SubgraphReply): unknown {
  const type = headerOf(reply, 'content-type') ?? '';
  const text = reply.body.toString('utf8');
  return type.startsWith('application/json') || type.startsWith('application/graphql-response+json')
    ? JSON.parse(text)
    : text;
}

/** A non-2xx answer as the error the gateway reports for that fetch (as RemoteGraphQLDataSource). */
function errorOf(url: URL, answer: SubgraphAnswer): GraphQLError {
  const extensions: Record<string, unknown> = {
    response: {
      url: url.href,
      status: answer.status,
      statusText: answer.statusText,
      body: answer.body,
    },
  };
  if (answer.status === 401) extensions.code = 'UNAUTHENTICATED';
  else if (answer.status === 403) extensions.code = 'FORBIDDEN';
  return new GraphQLError(`${answer.status}: ${answer.statusText}`, { extensions });
}

function persistedQueryNotFound(body: unknown): boolean {
  const errors = (body as GatewayGraphQLResponse | null)?.errors;
  return (
    Array.isArray(errors) && errors.some((error) => error.message === 'PersistedQueryNotFound')
  );
}

/** Narrows the incoming operation's cache policy by the subgraph's cache-control header. */
function restrictCachePolicy(
  options: GraphQLDataSourceProcessOptions<GatewayContext>,
  answer: SubgraphAnswer,
): void {
  if (!('incomingRequestContext' in options)) return; // a health check or schema load
  const policy = options.incomingRequestContext.overallCachePolicy;
  if (!policy || !('restrict' in policy)) return;
  const header = answer.header('cache-control') ?? '';
  const maxAge = /(?:^|,)\s*max-age=([0-9]+)\s*(?:,|$)/i.exec(header)?.[1];
  const scope = /(?:^|,)\s*private\s*(?:,|$)/i.test(header)
    ? 'PRIVATE'
    : /(?:^|,)\s*public\s*(?:,|$)/i.test(header)
      ? 'PUBLIC'
      : undefined;
  policy.restrict({ maxAge: maxAge === undefined ? 0 : Number(maxAge), ...(scope && { scope }) });
}

/** The sha256 of each query text the planner sends, computed once. */
class QueryHashes {
  private readonly known = new Map<string, string>();

  of(query: string): string {
    let hash = this.known.get(query);
    if (hash === undefined) {
      hash = createHash('sha256').update(query).digest('hex');
      if (this.known.size >= HASHES_KEPT) this.known.clear();
      this.known.set(query, hash);
    }
    return hash;
  }
}

/** One operation's answer, from a plain request or from its place in a batch. */
interface SubgraphAnswer {
  status: number;
  statusText: string;
  header(name: string): string | undefined;
  body: unknown;
}

function answerOfReply(reply: SubgraphReply): SubgraphAnswer {
  return {
    status: reply.status,
    statusText: reply.statusText,
    header: (name) => headerOf(reply, name),
    body: bodyOf(reply),
  };
}

function answerOfBatched(batched: BatchedAnswer): SubgraphAnswer {
  const headers = new Map(
    (batched.headers ?? []).map(([name, value]) => [name.toLowerCase(), value]),
  );
  return {
    status: batched.status,
    statusText: STATUS_CODES[batched.status] ?? '',
    header: (name) => headers.get(name),
    body: batched.result,
  };
}

/**
 * One subgraph over HTTP: the query's hash first (automatic persisted queries; the subgraph's
 * Apollo Server keeps registered queries), the full text only when the subgraph does not know it;
 * concurrent operations leave together in one request (subgraphBatch.ts).
 */
class HttpSubgraphDataSource implements GraphQLDataSource<GatewayContext> {
  private readonly url: URL;
  private readonly batcher: SubgraphBatcher;

  constructor(
    url: string,
    private readonly agent: Dispatcher,
    private readonly hashes: QueryHashes,
  ) {
    this.url = new URL(url);
    this.batcher = new SubgraphBatcher(
      async (operation) => toBatched(await this.sendOne(operation)),
      (operations, answer) => this.sendMany(operations, answer),
    );
  }

  async process(
    options: GraphQLDataSourceProcessOptions<GatewayContext>,
  ): Promise<GatewayGraphQLResponse> {
    const context = options.context as Partial<GatewayContext>;
    const { query, variables, operationName, extensions } = options.request;
    if (!query) throw new Error('subgraph request without a query');
    const operation: BatchedOperation = {
      operationName,
      variables,
      extensions: {
        ...extensions,
        persistedQuery: { version: 1, sha256Hash: this.hashes.of(query) },
      },
      actor: context.signedActor,
      correlationId: context.correlationId,
    };
    // With tracing on, each operation goes alone as a client span whose traceparent header parents
    // the subgraph's (a batch would mix the traces of several requests); off, operations batch.
    const answer = tracingActive()
      ? await inClientSpan(
          'subgraph POST',
          { 'http.request.method': 'POST', 'url.full': this.url.href },
          {},
          (traced) => this.sendTraced(operation, query, traced),
        )
      : await this.sendBatched(operation, query);
    if (answer.status < 200 || answer.status >= 300) throw errorOf(this.url, answer);
    if (answer.body === null || typeof answer.body !== 'object' || Array.isArray(answer.body))
      throw new Error(`Expected JSON response body, but received: ${String(answer.body)}`);
    restrictCachePolicy(options, answer);
    return answer.body as GatewayGraphQLResponse;
  }

  private async sendBatched(operation: BatchedOperation, query: string): Promise<SubgraphAnswer> {
    const answer = answerOfBatched(await this.batcher.submit(operation));
    return persistedQueryNotFound(answer.body) ? this.sendOne({ ...operation, query }) : answer;
  }

  private async sendTraced(
    operation: BatchedOperation,
    query: string,
    traced: Record<string, string>,
  ): Promise<SubgraphAnswer> {
    const answer = await this.sendOne(operation, traced);
    return persistedQueryNotFound(answer.body)
      ? this.sendOne({ ...operation, query }, traced)
      : answer;
  }

  /** A lone operation as a plain GraphQL-over-HTTP request, its credentials in headers. */
  private async sendOne(
    operation: BatchedOperation,
    extraHeaders: Record<string, string> = {},
  ): Promise<SubgraphAnswer> {
    const { actor, correlationId, ...request } = operation;
    const headers: Record<string, string> = { ...extraHeaders, 'content-type': 'application/json' };
    if (actor) headers[ACTOR_HEADER] = actor;
    if (correlationId) headers[CORRELATION_HEADER] = correlationId;
    return answerOfReply(await post(this.agent, this.url, headers, JSON.stringify(request)));
  }

  /**
   * Several operations in one request, each answer handed to `answer` as its line arrives; an
   * older subgraph's `{"answers": [...]}` is handed on in order once it is whole. A failure of the
   * request itself rejects (the batcher fails each operation not yet answered).
   */
  private async sendMany(
    operations: BatchedOperation[],
    answer: (index: number, batched: BatchedAnswer) => void,
  ): Promise<void> {
    const body = JSON.stringify({ operations });
    const headers = { 'content-type': 'application/json', accept: `${NDJSON}, application/json` };
    const reply = await post(this.agent, this.url, headers, body, (line) => {
      const entry = parseLine(line, operations.length);
      if (entry === null)
        throw new SubgraphTransportError(`subgraph ${this.url.origin}: a malformed answer line`);
      answer(entry.index, entry);
    });
    if (reply.streamed) return;
    const whole = answerOfReply(reply);
    if (whole.status < 200 || whole.status >= 300) throw errorOf(this.url, whole);
    const answers = (whole.body as { answers?: unknown } | null)?.answers;
    if (!Array.isArray(answers) || answers.length !== operations.length)
      throw new SubgraphTransportError(`subgraph ${this.url.origin}: no answers`);
    answers.forEach((batched, index) => answer(index, batched as BatchedAnswer));
  }
}

/** One answer line `{index, status, headers?, result}`, or null when it is not one. */
function parseLine(line: Buffer, count: number): (BatchedAnswer & { index: number }) | null {
  let value: unknown;
  try {
    value = JSON.parse(line.toString('utf8'));
  } catch {
    return null;
  }
  if (value === null || typeof value !== 'object') return null;
  const { index, status } = value as { index?: unknown; status?: unknown };
  if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= count) return null;
  if (!Number.isInteger(status)) return null;
  return value as BatchedAnswer & { index: number };
}

/** A plain answer in the batch's shape (the batcher hands both kinds back the same way). */
function toBatched(answer: SubgraphAnswer): BatchedAnswer {
  const cacheControl = answer.header('cache-control');
  return {
    status: answer.status,
    ...(cacheControl !== undefined && { headers: [['cache-control', cacheControl]] }),
    result: answer.body,
  };
}

/** The gateway's HTTP client to its subgraphs: one keep-alive agent, a data source per subgraph. */
export function createSubgraphClient(
  options: { timeoutMs?: number; maxResponseBytes?: number } = {},
): {
  dataSource(url: string): GraphQLDataSource<GatewayContext>;
  close(): Promise<void>;
} {
  const timeoutMs = options.timeoutMs ?? SUBGRAPH_TIMEOUT_MS;
  const agent = new Agent({
    connections: SUBGRAPH_MAX_CONNECTIONS,
    keepAliveTimeout: KEEP_ALIVE_MS,
    keepAliveMaxTimeout: KEEP_ALIVE_MS,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    maxResponseSize: options.maxResponseBytes ?? SUBGRAPH_MAX_RESPONSE_BYTES,
  });
  const hashes = new QueryHashes();
  return {
    dataSource: (url) => new HttpSubgraphDataSource(url, agent, hashes),
    close: () => agent.destroy(),
  };
}
