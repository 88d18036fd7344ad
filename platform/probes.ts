// What every role answers to its orchestrator and its scraper: GET /healthz (the process runs),
// GET /readyz (503 while draining, else the role's own checks) and GET /metrics (its prom-client
// registry). The gateway and the subgraph roles mount these on their own HTTP server; the worker
// role, which has none, serves them on a probe server of its own (METRICS_PORT).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpMetrics } from './metrics';

export const PROBE_PATHS = ['/healthz', '/readyz', '/metrics'] as const;

/** A check /readyz runs: resolves with what it reports ('ok' …) or rejects with why not. */
export type ReadinessCheck = () => Promise<string>;

export interface RoleProbes {
  readonly metrics: HttpMetrics;
  /** Named checks; each must resolve for the role to be ready (e.g. `database`). */
  readonly checks: Readonly<Record<string, ReadinessCheck>>;
  /** True once the process is stopping: load balancers must send nothing new. */
  readonly draining: () => boolean;
}

export interface Readiness {
  readonly status: 200 | 503;
  readonly body: { ready: boolean; checks: Record<string, string> };
}

/** /readyz's answer: draining first (no check is run then), else every check in turn. */
export async function readinessOf(probes: RoleProbes): Promise<Readiness> {
  if (probes.draining())
    return { status: 503, body: { ready: false, checks: { draining: 'stopping' } } };
  const checks: Record<string, string> = {};
  let ready = true;
  for (const [name, check] of Object.entries(probes.checks)) {
    try {
      checks[name] = await check();
    } catch (error) {
      ready = false;
      checks[name] = `failing: ${(error as Error).message}`;
    }
  }
  return { status: ready ? 200 : 503, body: { ready, checks } };
}

/** The database check of a role: one round trip on its pool. */
export function databaseCheck(pool: { query(sql: string): Promise<unknown> }): ReadinessCheck {
  return async () => {
    await pool.query('SELECT 1');
    return 'ok';
  };
}

/** Draining on stop: from drain() on, draining() is true; drain() resolves after `delayMs`. */
export function drainer(delayMs: number): { drain(): Promise<void>; draining(): boolean } {
  let drained: Promise<void> | null = null;
  return {
    drain: () => (drained ??= new Promise((resolve) => setTimeout(resolve, delayMs))),
    draining: () => drained !== null,
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

/** Answers the three probe paths; false for any other request (the caller answers it). */
export async function answerProbe(
  probes: RoleProbes,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const path = (req.url ?? '').split('?')[0];
  if (path === '/healthz') sendJson(res, 200, { ok: true });
  else if (path === '/readyz') {
    const readiness = await readinessOf(probes);
    sendJson(res, readiness.status, readiness.body);
  } else if (path === '/metrics') {
    const text = await probes.metrics.registry.metrics();
    res.writeHead(200, { 'content-type': probes.metrics.registry.contentType });
    res.end(text);
  } else return false;
  return true;
}

export interface ProbeServer {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** A server of the probes alone, for a role without an HTTP server (the worker). */
export async function startProbeServer(
  probes: RoleProbes,
  listen: { host: string; port: number },
): Promise<ProbeServer> {
  const server = createServer((req, res) => {
    answerProbe(probes, req, res)
      .then((answered) => {
        if (!answered) sendJson(res, 404, { code: 'ROUTE_NOT_FOUND' });
      })
      .catch(() => sendJson(res, 500, { code: 'INTERNAL_ERROR' }));
  });
  // A scraper's idle keep-alive socket must not hold the process open on stop.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${listen.host}:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
