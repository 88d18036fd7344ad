// The devnet domains merchant: a real x402 v2 seller on 127.0.0.1 built with the official libraries
// (@x402/express middleware, @x402/core resource server, @x402/evm `exact`), selling `domains.check`
// for 0.050000 USDC (50000 atomic) on the settlement chain and settling through its own in-process
// facilitator and relayer key, to its own payTo. `GET /domains/check?domain=<name>` answers, once
// paid, `{domain, available, checkedAt}` from a fixed registered set. A malformed request is a 400
// before any 402, so it never costs anything. `GET|POST|DELETE /__faults` reads, patches and
// resets the fault switches (faults.ts). Devnet only: no TLS, no auth on the fault API.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import express from 'express';
import type { RoutesConfig } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import {
  paymentMiddlewareFromHTTPServer,
  x402HTTPResourceServer,
  x402ResourceServer,
} from '@x402/express';
import { type Address, getAddress } from 'viem';
import { caip2Of } from '../../../platform/chain/clients';
import { serveOnLoopback } from '../../peers/loopback';
import { createMerchantFacilitator } from '../facilitator';
import type { MerchantKeys } from '../keys';
import { FaultPatchError, type MerchantFaults, NO_FAULTS, applyFaultPatch } from './faults';
import { normaliseDomain, registeredSet } from './names';

export const DOMAINS_CHECK_PATH = '/domains/check';
export const FAULTS_PATH = '/__faults';
/** 0.050000 USDC: the spec's price of one availability check. */
export const DOMAINS_CHECK_PRICE_ATOMIC = 50_000n;
/** The authorization lifetime buyers sign for (the official server's default). */
export const DOMAINS_CHECK_MAX_TIMEOUT_S = 300;
const DEFAULT_CONFIRMATION_TIMEOUT_MS = 30_000;
const FAULTS_MAX_BODY_BYTES = 4 * 1024;

export interface MerchantChain {
  readonly chainId: number;
  readonly rpcUrl: string;
  /** An EIP-3009 token; name and version are its EIP-712 domain. */
  readonly token: { readonly address: Address; readonly name: string; readonly version: string };
}

export interface DomainsMerchantOptions {
  readonly chain: MerchantChain;
  readonly keys: MerchantKeys;
  /** Names answered as taken; every other well-formed name is available. */
  readonly registeredDomains: Iterable<string>;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  readonly confirmationTimeoutMs?: number;
  readonly pollingIntervalMs?: number;
  /** The clock for `checkedAt`; defaults to the system clock. */
  readonly now?: () => Date;
  /** The authorization lifetime the 402 asks buyers to sign for; default DOMAINS_CHECK_MAX_TIMEOUT_S. */
  readonly maxTimeoutSeconds?: number;
}

export interface DomainsMerchant {
  /** http://127.0.0.1:<port>, no trailing slash. */
  readonly url: string;
  readonly network: `eip155:${number}`;
  readonly asset: Address;
  readonly payTo: Address;
  /** The facilitator's gas payer. */
  readonly relayer: Address;
  readonly priceAtomic: bigint;
  /** The switches in effect for requests arriving now. */
  readonly faults: MerchantFaults;
  /** The paid URL for one name. */
  checkUrl(domain: string): string;
  /** Changes the named switches only; same rules as `POST /__faults`. */
  setFaults(patch: Partial<MerchantFaults>): MerchantFaults;
  resetFaults(): MerchantFaults;
  stop(): Promise<void>;
}

function domainsCheckRoute(
  chain: MerchantChain,
  payTo: Address,
  maxTimeoutSeconds: number,
  faults: FaultState,
): RoutesConfig {
  const asset = getAddress(chain.token.address);
  const extra = { name: chain.token.name, version: chain.token.version };
  return {
    [`GET ${DOMAINS_CHECK_PATH}`]: {
      accepts: {
        scheme: 'exact',
        network: caip2Of(chain.chainId),
        payTo,
        // Read per request, so the `askAtomic` fault changes what the next 402 asks (and settles).
        price: () => ({
          amount: faults.current.askAtomic ?? DOMAINS_CHECK_PRICE_ATOMIC.toString(),
          asset,
          extra,
        }),
        maxTimeoutSeconds,
      },
      description: 'domains.check: whether a domain name is available for registration',
      mimeType: 'application/json',
    },
  };
}

/** Resolves true after `ms`, or false at once when the merchant stops first. */
function pause(ms: number, stopping: AbortSignal): Promise<boolean> {
  if (stopping.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onStop = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      stopping.removeEventListener('abort', onStop);
      resolve(true);
    }, ms);
    stopping.addEventListener('abort', onStop, { once: true });
  });
}

/**
 * Destroys the socket instead of writing a successful paid answer. Installed before the payment
 * middleware, so the middleware's "original" end is this one: it runs only once settlement has
 * succeeded (the middleware releases a 2xx with its PAYMENT-RESPONSE only then), while 4xx/5xx and
 * failed settlements still answer normally.
 */
function dropPaidAnswer(req: Request, res: Response): void {
  const end = res.end.bind(res);
  res.end = ((...args: Parameters<Response['end']>) => {
    if (res.statusCode < 400 && res.getHeader('payment-response') !== undefined) {
      req.socket.destroy();
      return res;
    }
    return end(...args);
  }) as Response['end'];
}

/** 400 for a bad fault patch; body-parser's own 4xx (bad JSON, too large); null for anything else. */
function clientErrorStatus(error: unknown): number | null {
  if (error instanceof FaultPatchError) return 400;
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : null;
}

/** The switches in effect; a holder, so the routes and the returned handle share one value. */
interface FaultState {
  current: MerchantFaults;
}

/** The official payment middleware over the merchant's own facilitator, its route checked at once. */
async function paymentFor(
  options: DomainsMerchantOptions,
  payTo: Address,
  faults: FaultState,
): Promise<RequestHandler> {
  const facilitator = createMerchantFacilitator({
    chain: options.chain,
    relayer: options.keys.relayer,
    confirmationTimeoutMs: options.confirmationTimeoutMs ?? DEFAULT_CONFIRMATION_TIMEOUT_MS,
    ...(options.pollingIntervalMs !== undefined
      ? { pollingIntervalMs: options.pollingIntervalMs }
      : {}),
  });
  const resourceServer = new x402ResourceServer(facilitator).register(
    caip2Of(options.chain.chainId),
    new ExactEvmScheme(),
  );
  const httpServer = new x402HTTPResourceServer(
    resourceServer,
    domainsCheckRoute(
      options.chain,
      payTo,
      options.maxTimeoutSeconds ?? DOMAINS_CHECK_MAX_TIMEOUT_S,
      faults,
    ),
  );
  // Fails here, not on the first buyer, when the facilitator cannot serve the route's network.
  await httpServer.initialize();
  return paymentMiddlewareFromHTTPServer(httpServer, undefined, undefined, false);
}

/**
 * `admit` runs before the payment middleware (method, refusal, validation: nothing is charged for
 * a request refused there), `answer` after verification. Each request keeps the switches it
 * arrived under, so flipping one mid-request changes nothing.
 */
function domainsCheckHandlers(deps: {
  faults: FaultState;
  registered: ReadonlySet<string>;
  now: () => Date;
  stopping: AbortSignal;
}) {
  const admit = (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET') {
      res
        .status(405)
        .set('Allow', 'GET')
        .json({ error: `${req.method} is not allowed; use GET` });
      return;
    }
    const requestFaults = deps.faults.current;
    if (requestFaults.refuseBeforePayment) {
      res.status(503).json({ error: 'the merchant refuses requests (fault: refuseBeforePayment)' });
      return;
    }
    const domain = normaliseDomain(req.query.domain);
    if (domain === null) {
      res
        .status(400)
        .json({ error: 'query parameter domain must be a domain name such as example.test' });
      return;
    }
    res.locals.domain = domain;
    res.locals.faults = requestFaults;
    if (requestFaults.dropAfterSettle) dropPaidAnswer(req, res);
    next();
  };
  const answer = async (_req: Request, res: Response) => {
    const requestFaults = res.locals.faults as MerchantFaults;
    if (requestFaults.delayMs > 0 && !(await pause(requestFaults.delayMs, deps.stopping))) {
      res.status(503).json({ error: 'the merchant is stopping' });
      return;
    }
    const domain = res.locals.domain as string;
    if (requestFaults.invalidAnswer) {
      res.json({ result: 'ok', note: 'not a domains.check answer (fault: invalidAnswer)' });
      return;
    }
    const taken = deps.registered.has(domain);
    const available = requestFaults.lieAboutAvailability ? taken : !taken;
    res.json({ domain, available, checkedAt: deps.now().toISOString() });
  };
  return { admit, answer };
}

function merchantApp(faults: FaultState, paidRoute: RequestHandler[]): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.get(FAULTS_PATH, (_req, res) => {
    res.json(faults.current);
  });
  app.post(FAULTS_PATH, express.json({ limit: FAULTS_MAX_BODY_BYTES }), (req, res) => {
    faults.current = applyFaultPatch(faults.current, req.body);
    res.json(faults.current);
  });
  app.delete(FAULTS_PATH, (_req, res) => {
    faults.current = NO_FAULTS;
    res.json(faults.current);
  });
  app.all(DOMAINS_CHECK_PATH, ...paidRoute);
  app.use((_req: Request, res: Response) => {
    res
      .status(404)
      .json({ error: `not found; this merchant sells GET ${DOMAINS_CHECK_PATH}?domain=<name>` });
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = clientErrorStatus(error);
    res
      .status(status ?? 500)
      .json({ error: status === null ? 'internal error' : (error as Error).message });
  });
  return app;
}

export async function startDomainsMerchant(
  options: DomainsMerchantOptions,
): Promise<DomainsMerchant> {
  const payTo = getAddress(options.keys.payTo);
  const faults: FaultState = { current: NO_FAULTS };
  const stopping = new AbortController();
  const { admit, answer } = domainsCheckHandlers({
    faults,
    registered: registeredSet(options.registeredDomains),
    now: options.now ?? (() => new Date()),
    stopping: stopping.signal,
  });
  const payment = await paymentFor(options, payTo, faults);
  const server = await serveOnLoopback(
    merchantApp(faults, [admit, payment, answer]),
    options.port ?? 0,
  );
  return {
    url: server.url,
    network: caip2Of(options.chain.chainId),
    asset: getAddress(options.chain.token.address),
    payTo,
    relayer: options.keys.relayer.address,
    priceAtomic: DOMAINS_CHECK_PRICE_ATOMIC,
    get faults() {
      return faults.current;
    },
    checkUrl: (domain) => `${server.url}${DOMAINS_CHECK_PATH}?domain=${encodeURIComponent(domain)}`,
    setFaults(patch) {
      faults.current = applyFaultPatch(faults.current, patch);
      return faults.current;
    },
    resetFaults() {
      faults.current = NO_FAULTS;
      return faults.current;
    },
    async stop() {
      stopping.abort();
      await server.stop();
    },
  };
}
