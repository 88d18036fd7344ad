// The devnet domains merchant: a real x402 v2 seller on 127.0.0.1 built with the official libraries
// (@x402/express middleware, @x402/core resource server, @x402/evm `exact`), selling `domains.check`
// for 0.050000 USDC (50000 atomic) on the settlement chain and settling through its own in-process
// facilitator and relayer key, to its own payTo. `GET /domains/check?domain=<name>` answers, once
// paid, `{domain, available, checkedAt}` from a fixed registered set. A malformed request is a 400
// before any 402, so it never costs anything. `GET|POST|DELETE /__faults` reads, patches and
// resets the fault switches (faults.ts). Devnet only: no TLS, no auth on the fault API.
import type { NextFunction, Request, Response } from 'express';
import express from 'express';
import type { RoutesConfig } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddlewareFromHTTPServer, x402HTTPResourceServer, x402ResourceServer } from '@x402/express';
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

function domainsCheckRoute(chain: MerchantChain, payTo: Address): RoutesConfig {
  return {
    [`GET ${DOMAINS_CHECK_PATH}`]: {
      accepts: {
        scheme: 'exact',
        network: caip2Of(chain.chainId),
        payTo,
        price: {
          amount: DOMAINS_CHECK_PRICE_ATOMIC.toString(),
          asset: getAddress(chain.token.address),
          extra: { name: chain.token.name, version: chain.token.version },
        },
        maxTimeoutSeconds: DOMAINS_CHECK_MAX_TIMEOUT_S,
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

export async function startDomainsMerchant(options: DomainsMerchantOptions): Promise<DomainsMerchant> {
  const { chain, keys } = options;
  const registered = registeredSet(options.registeredDomains);
  const now = options.now ?? (() => new Date());
  const network = caip2Of(chain.chainId);
  const payTo = getAddress(keys.payTo);
  const stopping = new AbortController();
  let faults = NO_FAULTS;

  const facilitator = createMerchantFacilitator({
    chain,
    relayer: keys.relayer,
    confirmationTimeoutMs: options.confirmationTimeoutMs ?? DEFAULT_CONFIRMATION_TIMEOUT_MS,
    ...(options.pollingIntervalMs !== undefined ? { pollingIntervalMs: options.pollingIntervalMs } : {}),
  });
  const resourceServer = new x402ResourceServer(facilitator).register(network, new ExactEvmScheme());
  const httpServer = new x402HTTPResourceServer(resourceServer, domainsCheckRoute(chain, payTo));
  // Fails here, not on the first buyer, when the facilitator cannot serve the route's network.
  await httpServer.initialize();
  const payment = paymentMiddlewareFromHTTPServer(httpServer, undefined, undefined, false);

  // Each request keeps the switches it arrived under, so flipping one mid-request changes nothing.
  const admit = (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET') {
      res.status(405).set('Allow', 'GET').json({ error: `${req.method} is not allowed; use GET` });
      return;
    }
    const requestFaults = faults;
    if (requestFaults.refuseBeforePayment) {
      res.status(503).json({ error: 'the merchant refuses requests (fault: refuseBeforePayment)' });
      return;
    }
    const domain = normaliseDomain(req.query.domain);
    if (domain === null) {
      res.status(400).json({ error: 'query parameter domain must be a domain name such as example.test' });
      return;
    }
    res.locals.domain = domain;
    res.locals.faults = requestFaults;
    if (requestFaults.dropAfterSettle) dropPaidAnswer(req, res);
    next();
  };
  const answer = async (_req: Request, res: Response) => {
    const requestFaults = res.locals.faults as MerchantFaults;
    if (requestFaults.delayMs > 0 && !(await pause(requestFaults.delayMs, stopping.signal))) {
      res.status(503).json({ error: 'the merchant is stopping' });
      return;
    }
    const domain = res.locals.domain as string;
    const taken = registered.has(domain);
    const available = requestFaults.lieAboutAvailability ? taken : !taken;
    res.json({ domain, available, checkedAt: now().toISOString() });
  };
  const patchFaults = (patch: unknown): MerchantFaults => {
    faults = applyFaultPatch(faults, patch);
    return faults;
  };

  const app = express();
  app.disable('x-powered-by');
  app.get(FAULTS_PATH, (_req, res) => {
    res.json(faults);
  });
  app.post(FAULTS_PATH, express.json({ limit: FAULTS_MAX_BODY_BYTES }), (req, res) => {
    res.json(patchFaults(req.body));
  });
  app.delete(FAULTS_PATH, (_req, res) => {
    faults = NO_FAULTS;
    res.json(faults);
  });
  app.all(DOMAINS_CHECK_PATH, admit, payment, answer);
  app.use((_req: Request, res: Response) => {
    res.status(404).json({ error: `not found; this merchant sells GET ${DOMAINS_CHECK_PATH}?domain=<name>` });
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    res.status(clientErrorStatus(error) ?? 500).json({ error: clientErrorStatus(error) ? (error as Error).message : 'internal error' });
  });
  const server = await serveOnLoopback(app, options.port ?? 0);

  return {
    url: server.url,
    network,
    asset: getAddress(chain.token.address),
    payTo,
    relayer: keys.relayer.address,
    priceAtomic: DOMAINS_CHECK_PRICE_ATOMIC,
    get faults() {
      return faults;
    },
    checkUrl: (domain) => `${server.url}${DOMAINS_CHECK_PATH}?domain=${encodeURIComponent(domain)}`,
    setFaults: (patch) => patchFaults(patch),
    resetFaults() {
      faults = NO_FAULTS;
      return faults;
    },
    async stop() {
      stopping.abort();
      await server.stop();
    },
  };
}
