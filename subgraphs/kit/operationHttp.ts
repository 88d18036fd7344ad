// The subgraph's hot path over HTTP: POST /graphql with a JSON body (what the gateway's pooled
// client sends) answered by a bare node:http handler — the body read under a cap, parsed once,
// checked as Apollo's HTTP layer checks it, then run by answerOperation (the signed actor verified,
// Apollo's pipeline with its persisted queries and document cache) and written as JSON once. It
// skips express, body-parser, ETags and Apollo's HTTP layer, which cost more than the operation.
// Any other request (GET, another media type or path) is left to the express app (see http.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApolloServer } from '@apollo/server';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
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
  const error = new GraphQLError(message, { extensions: { code: 'BAD_REQUEST' } });
  const formatted: GraphQLFormattedError = formatSubgraphError(error.toJSON(), error);
  send(res, 400, JSON.stringify({ errors: [formatted] }));
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
