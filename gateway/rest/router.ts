// Serves the route table: authenticates, checks route auth, runs the route's persisted GraphQL
// operation in-process on the gateway (same query plan and subgraph path as any GraphQL client)
// or its handler, and writes the REST body. Errors are thrown as AppError for the edge to render.
import { createHash } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import { canonicalJson } from '../../core/canon/jcs';
import { AppError, errorBody } from '../../core/errors';
import type { GatewayContext } from '../graphql/context';
import { routeKey } from '../graphql/paidFields';
import { PAYMENT_HEADERS } from '../x402/protocol';
import type { X402Extensions } from '../x402/extensions';
import type { Actor } from '../../platform/actor';
import type { Paywall } from '../x402/paywall';
import type { IdempotencyKeys } from './idempotency';
import { appErrorFromGraphQL, type GraphQLErrorLike } from './graphqlErrors';
import { checkPathIds, checkWireParameters } from './requestGuards';
import {
  isPriced,
  respondWith,
  type RequestTerms,
  type RestInput,
  type RestResult,
  type RestServiceInfo,
  type RouteDefinition,
  type RouteEdge,
} from './types';

export interface OperationResult {
  data?: Record<string, unknown> | null;
  errors?: readonly GraphQLErrorLike[];
}

export interface RestRouterDeps {
  readonly routes: readonly RouteDefinition[];
  readonly service: RestServiceInfo;
  readonly documents: ReadonlyMap<string, string>;
  /** Runs a persisted document through the gateway's ApolloServer. */
  execute(
    query: string,
    operationName: string,
    variables: Record<string, unknown>,
    context: GatewayContext,
  ): Promise<OperationResult>;
  /** Builds the operation context from the request's Authorization; rejects with AppError for a bad credential. */
  contextFor(authorization: string | undefined, correlationId: string): Promise<GatewayContext>;
  /** The same caller as a paid call of this priced route: the only context its operation runs in. */
  paidContext(context: GatewayContext, paidRoute: string): GatewayContext;
  /** CONSUMER_AUTH_REQUIRED: when false, consumer routes also serve a caller that only names a policyId. */
  readonly consumerAuthRequired: boolean;
  readonly edge: RouteEdge;
  /** The clock requests are validated against. */
  readonly now: () => Date;
  /** Takes x402 payment on priced routes; null serves them without payment (development without a chain). */
  readonly paywall: Paywall | null;
  /** The x402 extensions a priced route's answers carry (bazaar, offer-receipt); null: none beyond the paywall's. */
  readonly extensions?: X402Extensions | null;
  /** Idempotency-Key on REST POSTs (idempotency.ts); absent or null: the header is not honoured. */
  readonly idempotency?: IdempotencyKeys | null;
}

/** Route-level authentication; what each actor may see is the subgraph's decision. */
function checkRouteAuth(
  route: RouteDefinition,
  input: RestInput,
  consumerAuthRequired: boolean,
): void {
  if (route.auth === 'admin' && input.actor.kind !== 'admin')
    throw new AppError('ADMIN_AUTH_REQUIRED');
  if (route.auth === 'consumer' && input.actor.kind === 'anonymous') {
    const namesPolicy = typeof input.query.policyId === 'string' && input.query.policyId !== '';
    if (consumerAuthRequired || !namesPolicy) {
      throw new AppError(
        'AUTH_REQUIRED',
        'This route needs a session bearer (sign in at /consumer/auth/nonce and /consumer/auth/verify).',
      );
    }
  }
}

function send(res: Response, result: RestResult): void {
  if (result.headers)
    for (const [name, value] of Object.entries(result.headers)) res.setHeader(name, value);
  // A text answer (the CSV report) goes out as written, under the content type the route set.
  if (typeof result.body === 'string' && result.headers?.['content-type'] !== undefined)
    res.status(result.status).send(result.body);
  else res.status(result.status).json(result.body);
}

/** PAYMENT-SIGNATURE (or its alias X-PAYMENT), trimmed; null when absent. */
export function paymentHeader(req: Request): string | null {
  for (const name of PAYMENT_HEADERS) {
    const value = req.get(name);
    if (value !== undefined && value.trim() !== '') return value.trim();
  }
  return null;
}

/** The persisted documents a route runs: its operation, and its terms or check before any 402. */
function routeDocuments(route: RouteDefinition): string[] {
  const { price } = route;
  const before =
    price.kind === 'dynamic' ? price.terms : price.kind === 'paid' ? price.check : undefined;
  return [route.operation, before].flatMap((binding) => (binding ? [binding.document] : []));
}

/**
 * One call of a route as either transport hands it over (REST over Express, or an MCP tool call):
 * the same validation, route auth, paywall and operation, so both transports share one paid path.
 */
export interface RouteCall {
  /** The concrete path (`/receipt_status/0x…`), for the payment's resource and request digest. */
  readonly path: string;
  readonly params: Record<string, string>;
  readonly query: Record<string, string | string[] | undefined>;
  readonly body: unknown;
  /** The Authorization header value, if any. */
  readonly authorization: string | undefined;
  /** The x402 payment as a PAYMENT-SIGNATURE header value; null when absent. */
  readonly paymentHeader: string | null;
  readonly correlationId: string;
  /** HEAD shows the challenge and never pays: its answer would have no body to deliver. */
  readonly head?: boolean;
  /**
   * Runs once the caller is known and the request valid, before anything else: a stored answer
   * to give instead of running the route (REST's Idempotency-Key), or null to run it.
   */
  readonly storedAnswer?: (actor: Actor) => Promise<RestResult | null>;
}

/** What one authorization pays for: this method, path, query and body, byte-for-byte canonical. */
export function callDigest(
  method: string,
  call: Pick<RouteCall, 'path' | 'query' | 'body'>,
): string {
  const request = { method, path: call.path, query: call.query ?? {}, body: call.body ?? null };
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}

/** Serves one call of `route`: its answer, or throws AppError for the edge to render. */
export async function serveRoute(
  route: RouteDefinition,
  call: RouteCall,
  deps: RestRouterDeps,
): Promise<RestResult> {
  checkWireParameters(call.params, call.query);
  const context = await deps.contextFor(call.authorization, call.correlationId);
  const input: RestInput = {
    params: call.params,
    query: call.query,
    body: call.body,
    actor: context.actor,
    now: deps.now(),
  };
  checkRouteAuth(route, input, deps.consumerAuthRequired);
  // Validation comes before payment: a malformed request is a 400 and never a charge.
  checkPathIds(route, input.params);
  route.validate?.(input);
  const stored = call.storedAnswer ? await call.storedAnswer(context.actor) : null;
  if (stored !== null) return stored;
  const variables = route.operation ? route.operation.variables(input) : null;
  const run = async (): Promise<RestResult> => {
    if (route.handler) return route.handler(input, deps.service, deps.routes);
    const operation = route.operation!;
    // Reached only past the paywall (or with none, in development): the priced fields admit nothing else.
    const runAs = isPriced(route.price) ? deps.paidContext(context, routeKey(route)) : context;
    const result = await deps.execute(
      deps.documents.get(operation.document)!,
      operation.operationName,
      variables!,
      runAs,
    );
    if (result.errors && result.errors.length > 0) throw appErrorFromGraphQL(result.errors);
    if (!result.data) throw new AppError('INTERNAL_ERROR', 'The operation returned no data.');
    return respondWith(operation, result.data, input, deps.edge);
  };
  if (!isPriced(route.price) || deps.paywall === null) return run();
  // A request the route refuses (its check or its terms) is answered before any 402.
  const priced =
    route.price.kind === 'paid'
      ? await fixedPriceRequest(route, input, context, deps)
      : pricedRequest(await requestTerms(route, input, context, deps));
  const resourceUrl = `${deps.service.publicUrl}${call.path}`;
  const result = await deps.paywall.serve(
    {
      route: `${route.method} ${route.path}`,
      resource: {
        url: resourceUrl,
        description: route.purpose,
        mimeType: 'application/json',
      },
      ...priced,
      requestDigest: callDigest(route.method, call),
      paymentHeader: call.head ? null : call.paymentHeader,
    },
    () => answerOf(run, call.correlationId, deps),
  );
  return deps.extensions ? deps.extensions.enrich(route, resourceUrl, result) : result;
}

function handlerFor(route: RouteDefinition, deps: RestRouterDeps) {
  for (const document of routeDocuments(route)) {
    if (!deps.documents.has(document))
      throw new Error(
        `route ${route.method} ${route.path}: no persisted document ${document}.graphql`,
      );
  }
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      const result = await serveRoute(
        route,
        {
          path: req.path,
          params: req.params as Record<string, string>,
          query: req.query as Record<string, string | string[] | undefined>,
          body: req.body,
          authorization: req.headers.authorization,
          paymentHeader: paymentHeader(req),
          correlationId: String(res.locals.correlationId ?? ''),
          head: req.method === 'HEAD',
          ...(route.method === 'POST' && deps.idempotency
            ? { storedAnswer: idempotentAnswer(route, req, res, deps.idempotency, deps.paywall) }
            : {}),
        },
        deps,
      );
      send(res, result);
    } catch (error) {
      next(error);
    }
  };
}

/** REST's Idempotency-Key check of a POST, once serveRoute knows the caller (idempotency.ts). */
function idempotentAnswer(
  route: RouteDefinition,
  req: Request,
  res: Response,
  keys: IdempotencyKeys,
  paywall: Paywall | null,
): (actor: Actor) => Promise<RestResult | null> {
  const keyed = {
    priced: isPriced(route.price) && paywall !== null,
    bodyKeyField: route.idempotencyBodyKey,
  };
  // Read when the key is claimed: after the header was written into a route's body-key field.
  const digest = () =>
    callDigest(route.method, {
      path: req.path,
      query: req.query as RouteCall['query'],
      body: req.body,
    });
  return (actor) => keys.intercept(keyed, req, res, actor, digest);
}

/** Runs the paid call: a refusal is its answer and is replayed; a server error is not. */
async function answerOf(
  call: () => Promise<RestResult>,
  correlationId: string,
  deps: RestRouterDeps,
): Promise<RestResult> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    return {
      status: error.status,
      body: errorBody(error.code, {
        message: error.message,
        details: error.details,
        correlationId,
        docsBaseUrl: deps.service.docsBaseUrl,
      }),
    };
  }
}

/** Runs a route's free persisted operation (terms, check) as the caller, unpaid; its errors are the answer. */
async function runFree(
  route: RouteDefinition,
  binding: { readonly document: string; readonly operationName: string },
  label: 'terms' | 'check',
  variables: Record<string, unknown>,
  context: GatewayContext,
  deps: RestRouterDeps,
): Promise<Record<string, unknown>> {
  const source = deps.documents.get(binding.document);
  if (source === undefined)
    throw new Error(`route ${routeKey(route)}: no persisted document ${binding.document}.graphql`);
  const result = await deps.execute(source, binding.operationName, variables, context);
  if (result.errors && result.errors.length > 0) throw appErrorFromGraphQL(result.errors);
  if (!result.data)
    throw new AppError('INTERNAL_ERROR', `The ${label} operation returned no data.`);
  return result.data;
}

/** A dynamically priced route's terms for this request, from its terms operation (run as the caller, unpaid). */
async function requestTerms(
  route: RouteDefinition,
  input: RestInput,
  context: GatewayContext,
  deps: RestRouterDeps,
): Promise<RequestTerms> {
  if (route.price.kind !== 'dynamic') throw new Error(`route ${routeKey(route)} is not dynamic`);
  const { terms } = route.price;
  return terms.read(await runFree(route, terms, 'terms', terms.variables(input), context, deps));
}

/** A fixed-price request, with the refusal of the route's check (run as the caller, unpaid) if it has one. */
async function fixedPriceRequest(
  route: RouteDefinition,
  input: RestInput,
  context: GatewayContext,
  deps: RestRouterDeps,
): Promise<{ amountAtomic: bigint; refusal?: AppError }> {
  if (route.price.kind !== 'paid') throw new Error(`route ${routeKey(route)} is not fixed-price`);
  const { amountAtomic, check } = route.price;
  const variables = check ? check.variables(input) : null;
  if (!check || variables === null) return { amountAtomic };
  const refusal = check.read(await runFree(route, check, 'check', variables, context, deps));
  return refusal ? { amountAtomic, refusal } : { amountAtomic };
}

/** The paywall's view of request terms: nothing to pay is the refusal itself. */
function pricedRequest(terms: RequestTerms) {
  if (terms.amountAtomic === null)
    throw terms.refusal ?? new AppError('INTERNAL_ERROR', 'The route priced nothing.');
  return {
    amountAtomic: terms.amountAtomic,
    payTo: terms.payTo as `0x${string}`,
    asset: terms.asset,
    funding: terms.funding,
    ...(terms.refusal ? { refusal: terms.refusal } : {}),
  };
}

export function createRestRouter(deps: RestRouterDeps): express.Router {
  const router = express.Router();
  for (const route of deps.routes) {
    const handler = handlerFor(route, deps);
    if (route.method === 'GET') router.get(route.path, handler);
    else router.post(route.path, handler);
  }
  return router;
}

/** A route path as Express matches it: `:param` is one segment, case-insensitive, optional trailing slash. */
export function routePattern(path: string): RegExp {
  const segments = path
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    );
  return new RegExp(`^${segments.join('/')}/?$`, 'i');
}

/** Finds the route Express will run for a request (HEAD runs the GET route), before it runs; null for none. */
export function routeMatcher(
  routes: readonly RouteDefinition[],
): (method: string, path: string) => RouteDefinition | null {
  const table = routes.map((route) => ({ route, pattern: routePattern(route.path) }));
  return (method, path) => {
    const wanted = method === 'HEAD' ? 'GET' : method;
    return (
      table.find((entry) => entry.route.method === wanted && entry.pattern.test(path))?.route ??
      null
    );
  };
}

/** The methods the table serves on a path, for 405 answers with an Allow header. */
export function allowedMethods(routes: readonly RouteDefinition[], path: string): string[] {
  const methods = new Set<string>();
  for (const route of routes) if (routePattern(route.path).test(path)) methods.add(route.method);
  return [...methods].sort();
}
