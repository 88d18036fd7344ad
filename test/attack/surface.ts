// The attack surface, generated: every operation of /openapi.json joined with its route in the
// route table (the two must list the same operations), the body and query fields each route reads
// (found by running its own input mapping on a recording body), plus the edge endpoints outside
// the table. A route added tomorrow is fuzzed without touching this suite.
import type { RouteAuth, RouteDefinition, RestInput } from '../../gateway/rest/types';

export type TargetKind = 'rest' | 'graphql' | 'edge';

export interface AttackTarget {
  readonly kind: TargetKind;
  readonly method: 'GET' | 'POST';
  /** The path template as the route table writes it, e.g. /receipt_status/:receiptId. */
  readonly path: string;
  readonly params: readonly string[];
  readonly bodyFields: readonly string[];
  readonly queryFields: readonly string[];
  readonly priced: boolean;
  readonly auth: RouteAuth | 'edge';
}

interface OpenApiLike {
  paths: Record<string, Record<string, unknown>>;
}

/** The names a function reads from an object handed to it (every read answers a string). */
function recordingObject(seen: Set<string>): Record<string, unknown> {
  return new Proxy(
    {},
    {
      get(_target, key) {
        if (typeof key === 'string') seen.add(key);
        return 'x';
      },
    },
  );
}

/** Runs the route's validation and input mapping on recording objects: the fields it reads. */
export function probeFields(route: RouteDefinition): {
  bodyFields: string[];
  queryFields: string[];
} {
  const body = new Set<string>();
  const query = new Set<string>();
  const input: RestInput = {
    params: {},
    query: recordingObject(query) as RestInput['query'],
    body: recordingObject(body),
    actor: { kind: 'admin' },
    now: new Date(),
  };
  for (const step of [route.validate, route.operation?.variables]) {
    try {
      step?.(input);
    } catch {
      // Refusing 'x' is expected; only the names it asked for matter.
    }
  }
  return { bodyFields: [...body].sort(), queryFields: [...query].sort() };
}

function templateOf(openApiPath: string): string {
  return openApiPath.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}

function paramsOf(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((match) => match[1]);
}

/**
 * The route table's operations as /openapi.json publishes them. Throws when the document and the
 * table disagree, so neither can grow an operation the fuzz never sees.
 */
export function restTargets(
  openapi: OpenApiLike,
  routes: readonly RouteDefinition[],
): AttackTarget[] {
  const byKey = new Map(routes.map((route) => [`${route.method} ${route.path}`, route]));
  const targets: AttackTarget[] = [];
  for (const [openApiPath, operations] of Object.entries(openapi.paths)) {
    for (const method of Object.keys(operations)) {
      const key = `${method.toUpperCase()} ${templateOf(openApiPath)}`;
      const route = byKey.get(key);
      if (!route)
        throw new Error(`/openapi.json lists ${key}, which the route table does not serve`);
      byKey.delete(key);
      targets.push({
        kind: 'rest',
        method: route.method,
        path: route.path,
        params: paramsOf(route.path),
        ...probeFields(route),
        priced: route.price.kind === 'paid',
        auth: route.auth,
      });
    }
  }
  if (byKey.size > 0)
    throw new Error(
      `the route table serves operations /openapi.json omits: ${[...byKey.keys()].join(', ')}`,
    );
  return targets;
}

function edge(method: 'GET' | 'POST', path: string, kind: TargetKind = 'edge'): AttackTarget {
  return {
    kind,
    method,
    path,
    params: paramsOf(path),
    bodyFields: [],
    queryFields: [],
    priced: false,
    auth: 'edge',
  };
}

/** What the gateway serves outside the route table (docs/rest.md "Service endpoints", the channel callbacks, GraphQL). */
export const EDGE_TARGETS: readonly AttackTarget[] = [
  edge('GET', '/openapi.json'),
  edge('GET', '/healthz'),
  edge('GET', '/readyz'),
  edge('GET', '/metrics'),
  edge('GET', '/logo.svg'),
  edge('GET', '/docs/:file'),
  edge('POST', '/channels/telegram/webhook'),
  edge('POST', '/channels/slack/interactivity'),
  edge('POST', '/channels/webhook/reply'),
  {
    ...edge('POST', '/graphql', 'graphql'),
    bodyFields: ['query', 'operationName', 'variables', 'extensions'],
  },
  { ...edge('GET', '/graphql', 'graphql'), queryFields: ['query', 'operationName', 'variables'] },
];
