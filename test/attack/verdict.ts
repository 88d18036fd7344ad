// What every answer must satisfy, whatever was sent: an answer at all and in time, never a 5xx,
// every refusal in the documented error body (code registered, status and retryable as the
// registry says, docsUrl its anchor), the x402 challenge as documented, and no stack trace,
// internal path or secret anywhere in the body or headers.
import type { IncomingHttpHeaders } from 'node:http';
import { ERROR_CODES, docsUrlFor, isErrorCode } from '../../core/errors';
import type { AttackAnswer, AttackRequest } from './http';

export type ViolationKind =
  'hang' | 'no-answer' | '5xx' | 'off-shape' | 'non-json-accepted' | 'stack-trace' | 'secret';

export interface Violation {
  readonly kind: ViolationKind;
  /** Stable words (no request values), so equal failures group together. */
  readonly reason: string;
}

export interface VerdictContext {
  /** Values that must never appear in an answer: admin token, database URL, keys… */
  readonly secrets: readonly string[];
  /** The docs base the error bodies' docsUrl are built on. */
  readonly docsBaseUrl: string | null;
}

/** Apollo's own client-facing codes: GraphQL answers may carry them besides the registry's. */
const APOLLO_CLIENT_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

const LEAK_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bat (?:async )?[\w$.<>[\] ]*\(?(?:\/|file:|node:)[^\s()]*:\d+:\d+\)?/, 'a stack frame'],
  [/\/node_modules\//, 'a node_modules path'],
  [/postgres(?:ql)?:\/\/[^\s"']+/, 'a connection string'],
  [/x-spend-control-actor/i, 'the internal actor header'],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'a PEM private key'],
];

function headerText(headers: IncomingHttpHeaders): string {
  return Object.entries(headers)
    .map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') : (value ?? '')}`)
    .join('\n');
}

function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

function isJsonContentType(headers: IncomingHttpHeaders): boolean {
  return /^application\/json\b/i.test(String(headers['content-type'] ?? ''));
}

/** The REST error body, checked against the registry; null when it is one, else why not. */
export function errorBodyProblem(
  value: unknown,
  status: number,
  docsBaseUrl: string | null,
): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'not a JSON object';
  const body = value as Record<string, unknown>;
  if (!isErrorCode(body.code))
    return typeof body.code === 'string' ? 'code not in the registry' : 'no code';
  const spec = ERROR_CODES[body.code];
  if (typeof body.message !== 'string' || body.message === '') return 'no message';
  if (body.retryable !== spec.retryable) return 'retryable differs from the registry';
  if (body.docsUrl !== docsUrlFor(body.code, docsBaseUrl))
    return 'docsUrl is not the code’s anchor';
  if (spec.status !== status)
    return `status differs from the code’s (${body.code} is ${spec.status})`;
  return null;
}

/** A GraphQL answer: data, or errors each carrying a registered or Apollo client code. */
function graphQLProblem(value: unknown, status: number, docsBaseUrl: string | null): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'not a JSON object';
  const body = value as Record<string, unknown>;
  if ('code' in body) return errorBodyProblem(body, status, docsBaseUrl);
  if (!Array.isArray(body.errors))
    return status < 400 && 'data' in body ? null : 'neither data nor errors';
  for (const error of body.errors as Array<{
    message?: unknown;
    extensions?: { code?: unknown };
  }>) {
    const code = error?.extensions?.code;
    if (typeof error?.message !== 'string') return 'an error without a message';
    if (!isErrorCode(code) && !(typeof code === 'string' && APOLLO_CLIENT_CODES.has(code)))
      return 'an error without a known code';
  }
  return null;
}

function paymentChallengeProblem(
  request: AttackRequest,
  body: Buffer,
  headers: IncomingHttpHeaders,
): string | null {
  const parsed = parseJson(body);
  // A HEAD answer has no body by HTTP; the challenge is in its header all the same.
  const empty =
    parsed.ok &&
    typeof parsed.value === 'object' &&
    parsed.value !== null &&
    Object.keys(parsed.value).length === 0;
  if (request.method !== 'HEAD' && !empty) return '402 body is not {}';
  const header = headers['payment-required'];
  if (typeof header !== 'string') return '402 without a payment-required header';
  const decoded = parseJson(Buffer.from(header, 'base64'));
  if (!decoded.ok || (decoded.value as { x402Version?: unknown })?.x402Version !== 2)
    return 'payment-required is not a v2 challenge';
  return null;
}

function shapeProblem(
  request: AttackRequest,
  status: number,
  headers: IncomingHttpHeaders,
  body: Buffer,
  context: VerdictContext,
): string | null {
  if (status === 402) return paymentChallengeProblem(request, body, headers);
  if (status === 405 && !headers.allow) return '405 without an Allow header';
  if (status === 429 && !headers['retry-after']) return '429 without Retry-After';
  // Apollo serves /graphql and every path under it: those answer in GraphQL's shape.
  const graphql = request.kind === 'graphql' || request.path.split('?')[0].startsWith('/graphql');
  if (status < 400 && !graphql) return null;
  if (!isJsonContentType(headers))
    return status < 400
      ? null
      : `error answered as ${String(headers['content-type'] ?? 'no content type')}`;
  // HEAD answers carry the headers of the error body and, by HTTP, no body.
  if (request.method === 'HEAD') return null;
  const parsed = parseJson(body);
  if (!parsed.ok) return 'body is not JSON';
  return graphql
    ? graphQLProblem(parsed.value, status, context.docsBaseUrl)
    : errorBodyProblem(parsed.value, status, context.docsBaseUrl);
}

/**
 * docs/rest.md: bodies are JSON; another media type is 415 UNSUPPORTED_MEDIA_TYPE, never served.
 * application/json and the JSON structured suffix (application/<type>+json, RFC 6839) are JSON.
 */
function acceptedNonJson(request: AttackRequest, status: number): Violation | null {
  if (
    request.kind !== 'rest' ||
    request.method !== 'POST' ||
    request.body === null ||
    request.body.length === 0 ||
    status >= 300
  )
    return null;
  const type = (request.headers['content-type'] ?? '').toLowerCase();
  if (/^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/.test(type)) return null;
  return {
    kind: 'non-json-accepted',
    reason: `a ${type === '' ? 'body without content type' : type.split(';')[0]} body served ${status}`,
  };
}

function leakProblems(request: AttackRequest, text: string, context: VerdictContext): Violation[] {
  const sent = `${request.path}\n${request.body?.toString('latin1') ?? ''}`;
  const violations: Violation[] = [];
  for (const secret of context.secrets) {
    if (secret !== '' && text.includes(secret))
      violations.push({ kind: 'secret', reason: 'a configured secret in the answer' });
  }
  for (const [pattern, what] of LEAK_PATTERNS) {
    const match = pattern.exec(text);
    if (match && !sent.includes(match[0]))
      violations.push({
        kind: pattern === LEAK_PATTERNS[0][0] ? 'stack-trace' : 'secret',
        reason: what,
      });
  }
  return violations;
}

/** Every rule the answer breaks; empty when it holds. */
export function judge(
  request: AttackRequest,
  answer: AttackAnswer,
  context: VerdictContext,
): Violation[] {
  if (answer.kind === 'hang') return [{ kind: 'hang', reason: 'no answer before the timeout' }];
  if (answer.kind === 'no-answer')
    return [{ kind: 'no-answer', reason: 'connection closed without a status line' }];
  const violations: Violation[] = [];
  if (answer.status >= 500) violations.push({ kind: '5xx', reason: `status ${answer.status}` });
  const problem = shapeProblem(request, answer.status, answer.headers, answer.body, context);
  if (problem !== null) violations.push({ kind: 'off-shape', reason: problem });
  const mediaType = acceptedNonJson(request, answer.status);
  if (mediaType !== null) violations.push(mediaType);
  violations.push(
    ...leakProblems(
      request,
      `${headerText(answer.headers)}\n${answer.body.toString('utf8')}`,
      context,
    ),
  );
  return violations;
}

/** The error code of an answer, when it has one (REST body or the first GraphQL error). */
export function answerCode(answer: AttackAnswer): string | null {
  if (answer.kind !== 'response') return null;
  const parsed = parseJson(answer.body);
  if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null) return null;
  const body = parsed.value as {
    code?: unknown;
    errors?: Array<{ extensions?: { code?: unknown } }>;
  };
  if (typeof body.code === 'string') return body.code;
  const first = body.errors?.[0]?.extensions?.code;
  return typeof first === 'string' ? first : null;
}
