// OpenTelemetry traces across the service's hops, through a real process and a real OTLP/HTTP
// receiver on 127.0.0.1: `spend-control start --transport http` (each subgraph on its own port,
// so the gateway → subgraph hop is HTTP carrying the W3C traceparent header) with
// OTEL_EXPORTER_OTLP_ENDPOINT set; one GraphQL query yields one trace joining the gateway's HTTP
// request span, its GraphQL operation span (@apollo/gateway's gateway.request), the hop's client
// span, the subgraph's HTTP server span and operation span, and the subgraph's pg query spans,
// each with the right parent. Without the variable, no SDK module is even loaded.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';
import { projectRoot } from '../../platform/paths';
import { CLI, cliEnv, freePort } from '../support/cliProcess';
import { spawnUntil, type FleetProcess } from '../support/fleet';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlpReceiver';

jest.setTimeout(300_000);

const SERVER = 2;
const CLIENT = 3;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'spend-control-traces-'));
chmodSync(dataDir, 0o755);
let receiver: OtlpReceiver;
let db: TestDatabase;
let service: FleetProcess | null = null;

afterAll(async () => {
  await service?.stop();
  await receiver?.stop();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Which of the SDK's modules (and @apollo/gateway) `dist/cli/tracing.js` loads under `env`. */
function modulesLoadedBy(env: NodeJS.ProcessEnv): string[] {
  const script = `require(${JSON.stringify(path.join(projectRoot(), 'dist', 'cli', 'tracing.js'))});
    const names = Object.keys(require.cache).map((f) => f.match(/.*node_modules\\/(@[^/]+\\/[^/]+|[^/]+)\\//)?.[1]).filter(Boolean);
    process.stdout.write(JSON.stringify([...new Set(names)].sort()));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { env, encoding: 'utf8' }));
}

test('with OTEL_EXPORTER_OTLP_ENDPOINT unset nothing of the SDK loads; set, the SDK loads and @apollo/gateway still does not', () => {
  const env = { ...process.env };
  delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const off = modulesLoadedBy(env);
  expect(off.filter((name) => name.startsWith('@opentelemetry/'))).toEqual(['@opentelemetry/api']);
  const on = modulesLoadedBy({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
  expect(on).toEqual(
    expect.arrayContaining([
      '@opentelemetry/sdk-trace-base',
      '@opentelemetry/sdk-trace-node',
      '@opentelemetry/exporter-trace-otlp-http',
      '@opentelemetry/instrumentation-http',
      '@opentelemetry/instrumentation-pg',
    ]),
  );
  expect(on).not.toContain('@apollo/gateway');
});

function parentOf(spans: readonly ReceivedSpan[], span: ReceivedSpan): ReceivedSpan | undefined {
  return spans.find((other) => other.spanId === span.parentSpanId);
}

/** The span and its ancestors, nearest first. */
function lineage(spans: readonly ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const chain = [span];
  for (let up = parentOf(spans, span); up; up = parentOf(spans, up)) chain.push(up);
  return chain;
}

/** The spans of one trace, one line each, for a failure's message. */
function shown(spans: readonly ReceivedSpan[]): string {
  return spans
    .map(
      (s) =>
        `${s.spanId} <- ${s.parentSpanId || 'root'} ${s.kind} ${s.name} ${JSON.stringify(s.attributes)}`,
    )
    .join('\n');
}

async function until<T>(
  what: string,
  find: () => T | undefined,
  seen: () => readonly ReceivedSpan[],
): Promise<T> {
  for (let waited = 0; waited < 30_000; waited += 100) {
    const found = find();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no ${what} within 30 s; spans:\n${shown(seen())}`);
}

test('one GraphQL query: one trace joins the gateway request and operation, the HTTP hop, the subgraph and its database queries', async () => {
  receiver = await startOtlpReceiver();
  db = await createTestDatabase();
  const port = await freePort();
  service = await spawnUntil(process.execPath, [CLI, 'start', '--transport', 'http'], {
    env: {
      ...cliEnv(dataDir, port),
      DATABASE_URL: db.url,
      MIGRATION_DATABASE_URL: db.ownerUrl,
      // Free ports the system picks: a base chosen here could be taken by the chains and peers
      // the service starts before its subgraphs listen.
      SUBGRAPH_PORT_BASE: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
    ready: (output) => output.includes('ready           role all'),
    timeoutMs: 240_000,
  });
  const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'query CatalogProviders { catalog { providers { id } } }' }),
  });
  expect(response.status).toBe(200);
  expect(((await response.json()) as any).data.catalog.providers.length).toBeGreaterThan(0);

  const spans = receiver.spans;
  const operation = await until(
    'gateway.request span of CatalogProviders',
    () =>
      spans.find(
        (s) =>
          s.name === 'gateway.request' &&
          s.attributes['graphql.operation.name'] === 'CatalogProviders',
      ),
    () => spans,
  );
  const inTrace = () => spans.filter((s) => s.traceId === operation.traceId);
  const query = await until(
    'a pg span under the catalog subgraph',
    () =>
      inTrace().find(
        (s) =>
          s.attributes['db.system.name'] === 'postgresql' &&
          lineage(inTrace(), s).some((up) => up.name === 'subgraph catalog'),
      ),
    inTrace,
  );
  const chain = lineage(inTrace(), query);
  // Nearest first: the query's span up to the gateway's HTTP request, the trace's root.
  const subgraph = chain.find((s) => s.name === 'subgraph catalog')!;
  const subgraphServer = parentOf(inTrace(), subgraph)!;
  const hop = parentOf(inTrace(), subgraphServer)!;
  const root = chain.at(-1)!;
  expect(subgraph.attributes).toMatchObject({
    'spend.subgraph': 'catalog',
    'spend.transport': 'http',
  });
  expect(subgraphServer).toMatchObject({ kind: SERVER, service: 'spend-control-all' });
  // The subgraph's server span is parented by the hop's client span only through traceparent.
  expect(hop).toMatchObject({ name: 'subgraph POST', kind: CLIENT });
  expect(String(hop.attributes['url.full'])).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/graphql$/);
  expect(lineage(inTrace(), hop).map((s) => s.spanId)).toContain(operation.spanId);
  expect(lineage(inTrace(), operation).at(-1)).toBe(root);
  expect(root).toMatchObject({ kind: SERVER, parentSpanId: '' });
  expect(JSON.stringify(root.attributes)).toContain('/graphql');
  expect(new Set(chain.map((s) => s.traceId))).toEqual(new Set([operation.traceId]));
});
