// The shape of one REST route in the route table: method, exact path from the spec, price, who may
// call it, and either a persisted GraphQL operation (with its input and output mapping) or, for the
// few routes that describe the service itself, a handler.
import type { AppError, ErrorCode } from '../../core/errors';
import { parseDisplayAmount } from '../../core/money/amount';
import type { Actor } from '../../platform/actor';
import type { IssuedSession, SessionClaims } from '../auth/sessions';
import type { RestOperations } from './generated/operations';

export type HttpMethod = 'GET' | 'POST';

/** Prices are in USDT0 atomic units (6 decimals) on eip155:196, written once, here. */
export type RoutePrice =
  { readonly kind: 'free' } | { readonly kind: 'bundled' } | FixedPrice | DynamicPrice;

/**
 * A route with one price. It may name a `check`: a free persisted GraphQL operation the gateway
 * runs before any 402, whose refusal is answered instead of a challenge (a request that cannot
 * succeed is never charged).
 */
export interface FixedPrice {
  readonly kind: 'paid';
  readonly amountAtomic: bigint;
  readonly check?: RefusalCheck;
}

/** A fixed-price route's pre-payment check: whether this request may be offered a payment at all. */
export interface RefusalCheck {
  /** File name (without .graphql) in gateway/rest/documents/. */
  readonly document: string;
  readonly operationName: string;
  /** The check's variables for this request; null when this request needs no check. */
  variables(input: RestInput): Record<string, unknown> | null;
  /** Why no payment is taken for this request, or null to offer it. */
  read(data: Record<string, unknown>): AppError | null;
}

/**
 * A route priced per request: before any 402 the gateway runs `terms` (a persisted GraphQL
 * operation of the subgraph that owns the priced thing) and offers exactly what it answers.
 */
export interface DynamicPrice {
  readonly kind: 'dynamic';
  /** How the price is set, for the service map, discovery and openapi. */
  readonly basis: string;
  readonly terms: TermsBinding;
}

/** What a dynamically priced request costs, where it is paid, and what the payment pays for. */
export interface RequestTerms {
  /** null when there is nothing to pay (then `refusal` is set). */
  readonly amountAtomic: bigint | null;
  readonly network: string;
  readonly asset: string;
  readonly payTo: string;
  /** The consumer intent the payment funds. */
  readonly funding: { readonly policyId: string; readonly intentRef: string };
  /** Why no new payment is taken now (a payment already taken is still replayed). */
  readonly refusal: AppError | null;
}

export interface TermsBinding {
  /** File name (without .graphql) in gateway/rest/documents/. */
  readonly document: string;
  readonly operationName: string;
  variables(input: RestInput): Record<string, unknown>;
  read(data: Record<string, unknown>): RequestTerms;
}

/** Whether a route takes x402 payment: a fixed price or one set per request. */
export function isPriced(price: RoutePrice): price is FixedPrice | DynamicPrice {
  return price.kind === 'paid' || price.kind === 'dynamic';
}

/**
 * public: anyone. admin: an admin bearer (ADMIN_AUTH_REQUIRED otherwise). consumer: a session; a
 * caller without one only where CONSUMER_AUTH_REQUIRED=0 and it names a `policyId` query parameter
 * (AUTH_REQUIRED otherwise). The subgraph still decides what each actor may read.
 */
export type RouteAuth = 'public' | 'admin' | 'consumer';

export type RouteRateLimit = 'sign-in' | 'outbound';

export type RouteGroup =
  'control-plane' | 'operator' | 'consumer' | 'owner' | 'cafe' | 'builder' | 'identity' | 'service';

export interface RestInput {
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  readonly actor: Actor;
  /** The gateway's clock reading for this request (deadlines are validated against it). */
  readonly now: Date;
}

export interface RestResult {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** What the edge offers a route's response mapping: the gateway owns credentials, so it mints sessions. */
export interface RouteEdge {
  /** A session bearer for claims the policy subgraph has verified. */
  issueSession(claims: SessionClaims): Promise<IssuedSession>;
}

/** The operation name of a REST document (generated/operations.ts, `npm run codegen`). */
export type RestOperationName = keyof RestOperations;

/** What the operation named N answers, typed from its document's selection. */
export type RestOperationData<N extends RestOperationName> = RestOperations[N]['data'];

export interface OperationBindingOf<N extends RestOperationName> {
  /** File name (without .graphql) in gateway/rest/documents/. */
  readonly document: string;
  readonly operationName: N;
  /** Maps the request to GraphQL variables; throws AppError(REQUEST_INVALID, …) on bad input. */
  variables(input: RestInput): Record<string, unknown>;
  /** Maps the operation's data (typed by its document) to the REST body. */
  respond(
    data: RestOperationData<N>,
    input: RestInput,
    edge: RouteEdge,
  ): RestResult | Promise<RestResult>;
}

/**
 * A route's operation: one member per REST document, told apart by `operationName`, so a route's
 * `respond` gets the data its own document selects.
 */
export type OperationBinding = {
  [N in RestOperationName]: OperationBindingOf<N>;
}[RestOperationName];

/**
 * The router's one step from the gateway's answer to a route's typed data: the gateway executed
 * the document the binding names and validated its answer against that selection.
 */
export function respondWith(
  binding: OperationBinding,
  data: Record<string, unknown>,
  input: RestInput,
  edge: RouteEdge,
): RestResult | Promise<RestResult> {
  const typed = binding as OperationBindingOf<RestOperationName>;
  return typed.respond(data as RestOperationData<RestOperationName>, input, edge);
}

export interface RestServiceInfo {
  readonly publicUrl: string;
  readonly docsBaseUrl: string | null;
  readonly serviceName: string;
  readonly serviceDescription: string;
  readonly serviceImageUrl: string;
  readonly version: string;
  readonly payment: {
    readonly network: string;
    readonly asset: string | null;
    readonly assetSymbol: string;
    readonly assetDecimals: number;
    /** The token's EIP-712 domain name and version (x402 `extra`), e.g. "USD₮0" / "1". */
    readonly assetName: string;
    readonly assetVersion: string;
    readonly payTo: string | null;
  };
  readonly agentRegistrations: ReadonlyArray<{ agentId: string; agentRegistry: string }>;
}

export interface RouteDefinition {
  readonly method: HttpMethod;
  readonly path: string;
  readonly purpose: string;
  readonly group: RouteGroup;
  readonly auth: RouteAuth;
  readonly price: RoutePrice;
  readonly operation?: OperationBinding;
  /**
   * A path whose `:intentId` is not `ci_` + 24 hex is refused before any lookup or 402
   * (requestGuards.ts checkPathIds): 400 REQUEST_INVALID, or this code where a public route
   * answers a malformed id like an unknown one.
   */
  readonly malformedIntentId?: ErrorCode;
  /**
   * A tighter bucket charged beside the caller's usual one (docs/operations.md#rate-limits):
   * 'sign-in' for nonce issuing and SIWE verification, 'outbound' for routes that call a third party.
   */
  readonly rateLimit?: RouteRateLimit;
  /** A body field that is the route's own idempotency key, an alias of the Idempotency-Key header. */
  readonly idempotencyBodyKey?: string;
  /** Checks a handler route's request before any payment is taken; throws AppError(REQUEST_INVALID). */
  readonly validate?: (input: RestInput) => void;
  readonly handler?: (
    input: RestInput,
    service: RestServiceInfo,
    routes: readonly RouteDefinition[],
  ) => RestResult | Promise<RestResult>;
}

export const FREE: RoutePrice = { kind: 'free' };
export const BUNDLED: RoutePrice = { kind: 'bundled' };
export const PRICE_ASSET_DECIMALS = 6;
/** A paid route's price in display USDT0 ("0.05"), parsed exactly, with its pre-payment check if any. */
export function usdt0(display: string, check?: RefusalCheck): FixedPrice {
  const amountAtomic = parseDisplayAmount(display, PRICE_ASSET_DECIMALS);
  return check ? { kind: 'paid', amountAtomic, check } : { kind: 'paid', amountAtomic };
}
