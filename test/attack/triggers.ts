// Names the hostile feature of a request most likely to explain a failure, so the report groups
// one cause found on twenty routes into one line ("500 INTERNAL_ERROR ← content-encoding gzip").
// A heuristic: features are checked in a fixed order and the first present one is named.
import { METHODS } from 'node:http';
import type { AttackRequest } from './http';

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

function bodyText(request: AttackRequest): string {
  return request.body?.toString('utf8') ?? '';
}

function deepestRun(text: string): number {
  const runs = text.match(/(?:\[|\{"a":)+/g) ?? [];
  return runs.reduce((deepest, run) => Math.max(deepest, run.length), 0);
}

/** Whether the request is a JSON GraphQL POST whose body satisfies `test`. */
function graphQLBody(
  request: AttackRequest,
  test: (body: Record<string, unknown>) => boolean,
): boolean {
  if (request.kind !== 'graphql' || request.body === null) return false;
  try {
    const body: unknown = JSON.parse(bodyText(request));
    return typeof body === 'object' && body !== null && test(body as Record<string, unknown>);
  } catch {
    return false;
  }
}

function definesOperation(query: unknown, name: string): boolean {
  return (
    typeof query === 'string' &&
    name !== '' &&
    new RegExp(`\\b(query|mutation|subscription)\\s+${name.replace(/\W/g, '')}\\b`).test(query)
  );
}

const RULES: ReadonlyArray<readonly [string, (request: AttackRequest) => boolean]> = [
  ['a method Node does not know', (request) => !METHODS.includes(request.method)],
  ['a raw non-ASCII byte in the path', (request) => /[\x80-\xff]/.test(request.path)],
  ['a URL over 16 KB', (request) => request.path.length > 16_000],
  [
    'a request head over 16 KB',
    (request) =>
      Object.entries(request.headers).reduce(
        (size, [name, value]) => size + name.length + value.length + 4,
        request.path.length,
      ) > 16_000,
  ],
  ['a bad %-encoding in the path', (request) => !decodes(request.path.split('?')[0])],
  ['content-encoding', (request) => request.headers['content-encoding'] !== undefined],
  ['HEAD', (request) => request.method === 'HEAD'],
  ['a body over 64 KiB', (request) => (request.body?.length ?? 0) > 65_536],
  [
    'a GraphQL operationName the document does not define',
    (request) =>
      graphQLBody(
        request,
        (body) =>
          typeof body.operationName === 'string' &&
          !definesOperation(body.query, body.operationName),
      ),
  ],
  [
    'a GraphQL subscription over HTTP',
    (request) =>
      graphQLBody(
        request,
        (body) => typeof body.query === 'string' && /^\s*subscription\b/.test(body.query),
      ),
  ],
  [
    'GraphQL variables that are not an object',
    (request) =>
      graphQLBody(
        request,
        (body) =>
          body.variables !== undefined &&
          (typeof body.variables !== 'object' || Array.isArray(body.variables)),
      ),
  ],
  [
    'a body that is not UTF-8',
    (request) =>
      request.body !== null && !Buffer.from(bodyText(request), 'utf8').equals(request.body),
  ],
  [
    'a lone-surrogate escape in the body',
    (request) => /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/.test(bodyText(request)),
  ],
  ['a NUL in the body', (request) => /\\u0000/.test(bodyText(request))],
  [
    'a huge number in the body',
    (request) => /[0-9.][eE][+-]?[0-9]{3,}|[0-9]{300,}/.test(bodyText(request)),
  ],
  ['JSON nested over 60 deep', (request) => deepestRun(bodyText(request)) > 60],
  [
    'a non-JSON content type',
    (request) =>
      (request.body?.length ?? 0) > 0 &&
      !/^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i.test(request.headers['content-type'] ?? ''),
  ],
  [
    'a __proto__ or constructor key',
    (request) => /"(__proto__|constructor)"\s*:/.test(bodyText(request)),
  ],
  [
    'a bad %-encoding in the query',
    (request) =>
      request.path.includes('?') && !decodes(request.path.slice(request.path.indexOf('?') + 1)),
  ],
  [
    'a payment header',
    (request) =>
      ['payment-signature', 'x-payment', 'PAYMENT-SIGNATURE'].some(
        (name) => request.headers[name] !== undefined,
      ),
  ],
  [
    'a body that is not a JSON object',
    (request) => request.body !== null && !/^\s*\{/.test(bodyText(request)),
  ],
];

/** The first hostile feature of the request, or "ordinary input". */
export function likelyTrigger(request: AttackRequest): string {
  for (const [name, present] of RULES)
    if (present(request))
      return name === 'content-encoding'
        ? `content-encoding ${request.headers['content-encoding']}`
        : name;
  return 'ordinary input';
}
