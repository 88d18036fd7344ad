// The subgraph's hot path over HTTP: POST /graphql with a JSON body (what the gateway's pooled
// client sends) answered by a bare node:http handler — the body read under a cap, parsed once,
// checked as Apollo's HTTP layer checks it, then run by answerOperation (the signed actor verified,
// Apollo's pipeline with its persisted queries and document cache) and written as JSON once. It
// skips express, body-parser, ETags and Apollo's HTTP layer, which cost more than the operation.
// The gateway may also send several operations in one request, `{"operations": [...]}`, each with
// its own signed actor and correlation id (header values in the body), each answered
// `{status, headers, result}` as a single request would have been: one round trip and one wake-up
// for every preflight in flight instead of one each. A caller that accepts `application/x-ndjson`
// (the gateway's client) gets each answer as a line `{index, status, headers?, result}` the moment
// it is ready, in the order they finish, so no operation waits for the slowest of its batch;
// any other caller gets `{"answers": [...]}` in order once all are done.
// Any other request (GET, another media type or path) is left to the express app (see http.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApolloServer } from '@apollo/server';
import { GraphQLError } from 'graphql';
import { ERROR_CODES, type ErrorCode } from '../../core/errors';
import { ACTOR_HEADER, CORRELATION_HEADER } from '../../platform/actor';
import { formatSubgraphError } from './errors';
import {
  type OperationAnswer,
  type OperationRequest,
  runOperation,
  verifyCaller,
} from './operation';
import type { SubgraphContext } from './types';

const JSON_TYPE = 'application/json; charset=utf-8';
const NDJSON = 'application/x-ndjson';

/** Whether this request is the hot path's: POST to exactly `path` with a JSON media type. */
export function isJsonPost(req: IncomingMessage, path: string): boolean {
  if (req.method !== 'POST' || req.url !== path) return false;
  const type = req.headers['content-type'];
  if (type === undefined) return false;
  const essence = type.split(';', 1)[0].trim().toLowerCase();
  return essence === 'application/json';
}

function send(
  res: ServerResponse,
  status: number,
  body: string,
  headers: ReadonlyArray<readonly [string, string]> = [],
): void {
  res.statusCode = status;
  for (const [name, value] of headers) res.setHeader(name, value);
  res.setHeader('content-type', JSON_TYPE);
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(body);
}

function sendTransportError(res: ServerResponse, code: ErrorCode): void {
  const spec = ERROR_CODES[code];
  const extensions = { code, status: spec.status, retryable: spec.retryable };
  send(res, spec.status, JSON.stringify({ errors: [{ message: spec.message, extensions }] }));
}

function sendAnswer(res: ServerResponse, answer: OperationAnswer): void {
  send(res, answer.status, JSON.stringify(answer.result), answer.headers);
}

/** A request Apollo's HTTP layer would refuse as BAD_REQUEST, in the subgraph's error shape. */
function sendBadRequest(res: ServerResponse, message: string): void {
  sendAnswer(res, badRequestAnswer(message));
}

/** The body, or null once the cap is passed (the 413 is then already sent). */
function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  maxBytes: number,
): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length'] ?? 0);
  return new Promise((resolve, reject) => {
    const tooLarge = () => {
      res.setHeader('connection', 'close');
      sendTransportError(res, 'BODY_TOO_LARGE');
      req.resume();
      resolve(null);
    };
    if (declared > maxBytes) return tooLarge();
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= maxBytes) return void chunks.push(chunk);
      req.off('data', onData);
      tooLarge();
    };
    req.on('data', onData);
    req.on('error', reject);
    req.on('end', () => {
      if (received <= maxBytes) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    });
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The operation in a parsed POST body, or the reason Apollo's HTTP layer gives for refusing it. */
function operationOf(body: unknown): OperationRequest | string {
  if (!isRecord(body) || Object.keys(body).length === 0)
    return 'POST body missing, invalid Content-Type, or JSON object has no keys.';
  const { query, variables, operationName, extensions } = body;
  if (query !== undefined && query !== null && typeof query !== 'string')
    return 'GraphQL queries must be strings.';
  if (variables !== undefined && variables !== null && !isRecord(variables))
    return '`variables` in a POST body must be an object if provided.';
  if (extensions !== undefined && extensions !== null && !isRecord(extensions))
    return '`extensions` in a POST body must be an object if provided.';
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string')
    return '`operationName` in a POST body must be a string if provided.';
  return {
    query: typeof query === 'string' ? query : undefined,
    operationName: typeof operationName === 'string' ? operationName : undefined,
    variables: isRecord(variables) ? variables : undefined,
    extensions: isRecord(extensions) ? extensions : undefined,
  };
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** Most operations one batch may carry; the gateway's client sends at most SUBGRAPH_BATCH_MAX. */
export const MAX_BATCH_OPERATIONS = 64;

/** One operation of a batch as the gateway sends it: the request plus its credentials. */
interface BatchEntry {
  operation: OperationRequest | string;
  actorHeader?: string;
  correlationId?: string;
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The entries of a batch body, or the reason it is refused. */
function batchOf(operations: unknown): BatchEntry[] | string {
  if (!Array.isArray(operations) || operations.length === 0)
    return '`operations` must be a non-empty array.';
  if (operations.length > MAX_BATCH_OPERATIONS)
    return `A batch carries at most ${MAX_BATCH_OPERATIONS} operations.`;
  return operations.map((entry: unknown) => {
    if (!isRecord(entry)) return { operation: 'Each batched operation must be an object.' };
    const { actor, correlationId, ...request } = entry;
    return {
      operation: operationOf(request),
      actorHeader: stringOrUndefined(actor),
      correlationId: stringOrUndefined(correlationId),
    };
  });
}

function badRequestAnswer(message: string): OperationAnswer {
  const error = new GraphQLError(message, { extensions: { code: 'BAD_REQUEST' } });
  return {
    status: 400,
    headers: [],
    result: { errors: [formatSubgraphError(error.toJSON(), error)] },
  };
}

/** One batched operation, answered as a single request with the same credentials would be. */
async function answerEntry(
  server: ApolloServer<SubgraphContext>,
  entry: BatchEntry,
): Promise<OperationAnswer> {
  const caller = verifyCaller(server, entry);
  if ('refused' in caller) return caller.refused;
  if (typeof entry.operation === 'string') return badRequestAnswer(entry.operation);
  try {
    return await runOperation(server, entry.operation, caller.context);
  } catch {
    const spec = ERROR_CODES.INTERNAL_ERROR;
    const extensions = { code: 'INTERNAL_ERROR', status: spec.status, retryable: spec.retryable };
    return {
      status: 500,
      headers: [],
      result: { errors: [{ message: spec.message, extensions }] },
    };
  }
}

/** An answer as the batch carries it: the headers only when there are any. */
function wireOf({ status, headers, result }: OperationAnswer): Record<string, unknown> {
  return headers.length === 0 ? { status, result } : { status, headers, result };
}

/** Whether the caller reads a batch's answers as lines, each as soon as it is ready. */
function acceptsLines(req: IncomingMessage): boolean {
  const accept = headerValue(req, 'accept');
  return accept !== undefined && accept.toLowerCase().includes(NDJSON);
}

/**
 * Each answer written as its line when its operation finishes. Lines finishing in the same turn of
 * the event loop leave in one write (corked until the turn ends).
 */
async function streamAnswers(
  server: ApolloServer<SubgraphContext>,
  res: ServerResponse,
  entries: BatchEntry[],
): Promise<void> {
  res.statusCode = 200;
  res.setHeader('content-type', `${NDJSON}; charset=utf-8`);
  let corked = false;
  const uncork = () => {
    if (!corked) return;
    corked = false;
    res.uncork();
  };
  await Promise.all(
    entries.map(async (entry, index) => {
      const line = JSON.stringify({ index, ...wireOf(await answerEntry(server, entry)) });
      if (!corked) {
        corked = true;
        res.cork();
        process.nextTick(uncork);
      }
      res.write(`${line}\n`);
    }),
  );
  uncork();
  res.end();
}

/** Every operation of a batch at once (so the subgraph's own batching sees them together). */
async function answerBatch(
  server: ApolloServer<SubgraphContext>,
  req: IncomingMessage,
  res: ServerResponse,
  operations: unknown,
): Promise<void> {
  const entries = batchOf(operations);
  if (typeof entries === 'string') return sendBadRequest(res, entries);
  if (acceptsLines(req)) return streamAnswers(server, res, entries);
  const answers = await Promise.all(entries.map((entry) => answerEntry(server, entry)));
  send(res, 200, JSON.stringify({ answers: answers.map(wireOf) }));
}

function isBatch(body: unknown): body is { operations: unknown } {
  return isRecord(body) && 'operations' in body && Object.keys(body).length === 1;
}

/** Answers one hot-path request; never rejects (a failure is answered INTERNAL_ERROR). */
export function operationHandler(
  server: ApolloServer<SubgraphContext>,
  maxBodyBytes: number,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    try {
      const raw = await readBody(req, res, maxBodyBytes);
      if (raw === null) return;
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return sendTransportError(res, 'BODY_NOT_JSON');
      }
      if (isBatch(body)) return await answerBatch(server, req, res, body.operations);
      // As Apollo's HTTP layer: the caller is verified before the body's shape is judged.
      const caller = verifyCaller(server, {
        actorHeader: headerValue(req, ACTOR_HEADER),
        correlationId: headerValue(req, CORRELATION_HEADER),
      });
      const operation = operationOf(body);
      if ('refused' in caller) return sendAnswer(res, caller.refused);
      if (typeof operation === 'string') return sendBadRequest(res, operation);
      sendAnswer(res, await runOperation(server, operation, caller.context));
    } catch {
      if (!res.headersSent) sendTransportError(res, 'INTERNAL_ERROR');
      else res.destroy();
    }
  };
}
