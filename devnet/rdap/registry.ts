// A local stand-in for an RDAP registry (RFC 9082 paths, RFC 9083 answers) on 127.0.0.1: /dns.json
// is an RFC 9224 bootstrap pointing the devnet TLDs at itself, /domain/<name> answers a domain object
// for a registered name and a 404 error object for any other. Fault switches (slow, 500, malformed
// JSON, 429, reset), set by code or through the loopback admin endpoint, exercise every failure path.
import express, { type NextFunction, type Request, type Response } from 'express';
import { InvalidDomainNameError, normaliseDomainName } from '../../platform/rdap/names';
import { isRecord } from '../peers/json';
import { DEFAULT_WAIT_TIMEOUT_MS, Inbox } from '../peers/inbox';
import { serveOnLoopback } from '../peers/loopback';
import { DEVNET_RDAP_TLDS, DEVNET_REGISTERED_NAMES } from './names';
import { domainObject, errorObject, RDAP_CONTENT_TYPE } from './objects';

export const FAULT_ANSWERS = ['NORMAL', 'HTTP_500', 'MALFORMED_JSON', 'HTTP_429', 'RESET'] as const;
export type FaultAnswer = (typeof FAULT_ANSWERS)[number];
export const MAX_FAULT_DELAY_MS = 120_000;
export const DEFAULT_BOOTSTRAP_MAX_AGE_SECONDS = 3_600;
const ADMIN_MAX_BODY_BYTES = 4 * 1024;

/** Applied to /domain/ requests only; the bootstrap file is always served. */
export interface RdapFaults {
  /** Each domain answer waits this long first. */
  readonly delayMs: number;
  /** HTTP_500, MALFORMED_JSON (200 with broken JSON), HTTP_429 (with Retry-After), RESET (connection cut, no answer). */
  readonly answer: FaultAnswer;
  readonly retryAfterSeconds: number;
}

export const NO_FAULTS: RdapFaults = { delayMs: 0, answer: 'NORMAL', retryAfterSeconds: 1 };

export interface DevnetRdapRegistryOptions {
  /** Registered names (any form; stored as A-labels); default DEVNET_REGISTERED_NAMES. */
  readonly registeredNames?: readonly string[];
  /** TLDs the bootstrap points here; default DEVNET_RDAP_TLDS. */
  readonly tlds?: readonly string[];
  /** Cache-Control max-age of /dns.json. */
  readonly bootstrapMaxAgeSeconds?: number;
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** Dates in the domain objects; defaults to the system clock. */
  readonly now?: () => Date;
}

export interface RdapRegistryStats {
  readonly bootstrapRequests: number;
  readonly domainRequests: number;
  readonly inFlight: number;
  /** The most domain requests ever open at once since the last resetStats(). */
  readonly maxInFlight: number;
}

export interface RdapRequestSeen {
  readonly path: string;
  readonly accept: string | null;
}

export interface DevnetRdapRegistry {
  /** http://127.0.0.1:<port>; the RDAP base URL is this plus "/". */
  readonly url: string;
  /** <url>/dns.json, the value for RDAP_BOOTSTRAP_URL. */
  readonly bootstrapUrl: string;
  readonly registeredNames: readonly string[];
  readonly faults: RdapFaults;
  readonly stats: RdapRegistryStats;
  /** Every /domain/ request, oldest first (the most recent 1,000). */
  readonly requests: readonly RdapRequestSeen[];
  waitForRequest(
    predicate?: (request: RdapRequestSeen) => boolean,
    timeoutMs?: number,
  ): Promise<RdapRequestSeen>;
  /** Changes the named switches and keeps the others. */
  setFaults(faults: Partial<RdapFaults>): void;
  clearFaults(): void;
  resetStats(): void;
  stop(): Promise<void>;
}

export async function startDevnetRdapRegistry(
  options: DevnetRdapRegistryOptions = {},
): Promise<DevnetRdapRegistry> {
  const state = new RegistryState(options);
  const server = await serveOnLoopback(registryApp(state), options.port ?? 0);
  state.baseUrl = server.url;
  return {
    url: server.url,
    bootstrapUrl: `${server.url}/dns.json`,
    registeredNames: [...state.registered],
    get faults() {
      return state.faults;
    },
    get stats() {
      return { ...state.stats };
    },
    requests: state.seen.items,
    waitForRequest: (predicate, timeoutMs = DEFAULT_WAIT_TIMEOUT_MS) =>
      state.seen.waitFor(predicate, timeoutMs),
    setFaults: (changes) => {
      state.faults = checkFaults({ ...state.faults, ...changes });
    },
    clearFaults: () => {
      state.faults = NO_FAULTS;
    },
    resetStats: () => state.resetStats(),
    async stop() {
      for (const timer of state.timers) clearTimeout(timer);
      state.seen.close();
      await server.stop();
    },
  };
}

/** What the registry holds and has seen; the handlers read and update it. */
class RegistryState {
  readonly tlds: readonly string[];
  readonly registered: ReadonlySet<string>;
  readonly maxAgeSeconds: number;
  readonly startedAt: Date;
  readonly seen = new Inbox<RdapRequestSeen>('RDAP request');
  /** Delayed answers still to send; cleared on stop. */
  readonly timers = new Set<NodeJS.Timeout>();
  faults: RdapFaults = NO_FAULTS;
  stats = { bootstrapRequests: 0, domainRequests: 0, inFlight: 0, maxInFlight: 0 };
  /** Set once the server listens. */
  baseUrl = '';

  constructor(options: DevnetRdapRegistryOptions) {
    this.tlds = (options.tlds ?? DEVNET_RDAP_TLDS).map((tld) =>
      normaliseDomainName(`x.${tld}`).slice(2),
    );
    this.registered = new Set(
      (options.registeredNames ?? DEVNET_REGISTERED_NAMES).map((name) => normaliseDomainName(name)),
    );
    for (const name of this.registered) {
      if (!this.tlds.some((tld) => name.endsWith(`.${tld}`)))
        throw new RangeError(`${name} is not under a served TLD (${this.tlds.join(', ')})`);
    }
    this.maxAgeSeconds = options.bootstrapMaxAgeSeconds ?? DEFAULT_BOOTSTRAP_MAX_AGE_SECONDS;
    if (!Number.isInteger(this.maxAgeSeconds) || this.maxAgeSeconds < 0)
      throw new RangeError('bootstrapMaxAgeSeconds must be a non-negative integer');
    this.startedAt = (options.now ?? (() => new Date()))();
  }

  resetStats(): void {
    this.stats = {
      bootstrapRequests: 0,
      domainRequests: 0,
      inFlight: this.stats.inFlight,
      maxInFlight: this.stats.inFlight,
    };
    this.seen.items.length = 0;
  }
}

function registryApp(state: RegistryState): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/dns.json', (_req: Request, res: Response) => {
    state.stats.bootstrapRequests += 1;
    const services = [[state.tlds, [`${state.baseUrl}/`]]];
    const bootstrap = {
      version: '1.0',
      publication: state.startedAt.toISOString(),
      description: 'spend-control devnet RDAP bootstrap',
      services,
    };
    res
      .set('cache-control', `public, max-age=${state.maxAgeSeconds}`)
      .type('application/json')
      .send(JSON.stringify(bootstrap));
  });
  app.get('/domain/:name', (req: Request, res: Response) => {
    const { stats } = state;
    state.seen.record({ path: req.path, accept: req.get('accept') ?? null });
    stats.domainRequests += 1;
    stats.inFlight += 1;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    res.on('close', () => {
      state.stats.inFlight -= 1;
    });
    if (state.faults.delayMs === 0) return answerDomain(state, req, res);
    const timer = setTimeout(() => {
      state.timers.delete(timer);
      if (!res.destroyed) answerDomain(state, req, res);
    }, state.faults.delayMs);
    state.timers.add(timer);
  });
  app.use(
    '/_admin',
    adminRoutes(
      { get: () => state.faults, set: (next) => (state.faults = next) },
      () => state.stats,
    ),
  );
  app.use((_req: Request, res: Response) => {
    res
      .status(404)
      .type(RDAP_CONTENT_TYPE)
      .send(errorObject(404, 'Not Found', 'no such RDAP path'));
  });
  return app;
}

/** The switched fault if one is set, else the registry's true answer. */
function answerDomain(state: RegistryState, req: Request, res: Response): void {
  const { answer, retryAfterSeconds } = state.faults;
  if (answer === 'RESET') {
    req.socket.destroy();
    return;
  }
  res.type(RDAP_CONTENT_TYPE);
  if (answer === 'HTTP_500')
    res.status(500).send(errorObject(500, 'Internal Server Error', 'devnet fault switch: 500'));
  else if (answer === 'HTTP_429')
    res
      .status(429)
      .set('retry-after', String(retryAfterSeconds))
      .send(errorObject(429, 'Too Many Requests', 'devnet fault switch: rate limited'));
  else if (answer === 'MALFORMED_JSON')
    res.status(200).send('{"objectClassName": "domain", "ldhName": ');
  else answerLookup(state, String(req.params.name), res);
}

function answerLookup(state: RegistryState, raw: string, res: Response): void {
  let name: string;
  try {
    name = normaliseDomainName(raw);
  } catch (error) {
    const reason = error instanceof InvalidDomainNameError ? error.reason : 'invalid name';
    res.status(400).send(errorObject(400, 'Bad Request', `not a domain name: ${reason}`));
    return;
  }
  if (!state.registered.has(name)) {
    res.status(404).send(errorObject(404, 'Not Found', `${name} is not registered here`));
    return;
  }
  res.status(200).send(domainObject(name, state.baseUrl, state.startedAt));
}

/** GET/PUT /_admin/faults (a partial RdapFaults as JSON), GET /_admin/stats; loopback callers only. */
function adminRoutes(
  faults: { get(): RdapFaults; set(next: RdapFaults): void },
  stats: () => RdapRegistryStats,
): express.Router {
  const router = express.Router();
  router.use((req: Request, res: Response, next: NextFunction) => {
    const remote = req.socket.remoteAddress ?? '';
    if (remote === '127.0.0.1' || remote === '::1' || remote === '::ffff:127.0.0.1') next();
    else res.status(403).json({ error: 'loopback only' });
  });
  router.use(express.json({ limit: ADMIN_MAX_BODY_BYTES }));
  router.get('/faults', (_req: Request, res: Response) => {
    res.json(faults.get());
  });
  router.put('/faults', (req: Request, res: Response) => {
    try {
      if (!isRecord(req.body)) throw new RangeError('the body must be a JSON object');
      faults.set(checkFaults({ ...faults.get(), ...req.body }));
      res.json(faults.get());
    } catch (error) {
      res.status(400).json({ error: (error as Error).message });
    }
  });
  router.get('/stats', (_req: Request, res: Response) => {
    res.json(stats());
  });
  return router;
}

function checkFaults(candidate: Record<string, unknown>): RdapFaults {
  const { delayMs, answer, retryAfterSeconds } = candidate;
  if (
    !Number.isInteger(delayMs) ||
    (delayMs as number) < 0 ||
    (delayMs as number) > MAX_FAULT_DELAY_MS
  ) {
    throw new RangeError(`delayMs must be an integer in 0..${MAX_FAULT_DELAY_MS}`);
  }
  if (!(FAULT_ANSWERS as readonly unknown[]).includes(answer))
    throw new RangeError(`answer must be one of ${FAULT_ANSWERS.join(', ')}`);
  if (
    !Number.isInteger(retryAfterSeconds) ||
    (retryAfterSeconds as number) < 0 ||
    (retryAfterSeconds as number) > 86_400
  ) {
    throw new RangeError('retryAfterSeconds must be an integer in 0..86400');
  }
  return {
    delayMs: delayMs as number,
    answer: answer as FaultAnswer,
    retryAfterSeconds: retryAfterSeconds as number,
  };
}
