// What the soak reads besides its own counts: the service's memory, from its /metrics Node series
// (so it works for a service started here or elsewhere), and the 4xx answers by kind (route,
// status, error code) with the first body of each kind, so a refused operation can be explained.
import { readFileSync } from 'node:fs';

/** The service process's memory, MB, as its /metrics reports it. */
export interface ServiceMemory {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

const SERIES: Record<keyof ServiceMemory, string> = {
  rss: 'process_resident_memory_bytes',
  heapUsed: 'nodejs_heap_size_used_bytes',
  heapTotal: 'nodejs_heap_size_total_bytes',
  external: 'nodejs_external_memory_bytes',
  arrayBuffers: 'nodejs_array_buffers_bytes',
};

/** One unlabelled series' value from a Prometheus text exposition, or NaN when absent. */
function seriesValue(text: string, name: string): number {
  const line = new RegExp(`^${name} ([0-9.e+]+)`, 'm').exec(text);
  return line ? Number(line[1]) : Number.NaN;
}

/** Reads /metrics once; null when the service does not answer. */
export async function serviceMemory(url: string): Promise<ServiceMemory | null> {
  try {
    const response = await fetch(`${url}/metrics`);
    if (!response.ok) return null;
    const text = await response.text();
    const mb = (name: string) => Math.round(seriesValue(text, name) / 1024 / 1024);
    return {
      rss: mb(SERIES.rss),
      heapUsed: mb(SERIES.heapUsed),
      heapTotal: mb(SERIES.heapTotal),
      external: mb(SERIES.external),
      arrayBuffers: mb(SERIES.arrayBuffers),
    };
  } catch {
    return null;
  }
}

/**
 * The service's queues as its /metrics gauges show them (docs/operations.md "Metrics"): consumer
 * intents not yet final by state, escalations waiting for an owner, receipts waiting to be
 * anchored, requests waiting for a database connection, and the event loop's lag (ms). Work that
 * piles up shows here while latencies climb. Null when /metrics does not answer.
 */
export async function serviceBacklog(url: string): Promise<string | null> {
  let text: string;
  try {
    const response = await fetch(`${url}/metrics`);
    if (!response.ok) return null;
    text = await response.text();
  } catch {
    return null;
  }
  const sum = (name: string) => {
    let total = 0;
    for (const match of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm')))
      total += Number(match[1]);
    return total;
  };
  const intents = [
    ...text.matchAll(/^spend_consumer_intents_open\{state="([A-Z_]+)"\} ([0-9.e+]+)$/gm),
  ]
    .filter((match) => Number(match[2]) > 0)
    .map((match) => `${match[1]} ${match[2]}`);
  const lagMs = seriesValue(text, 'nodejs_eventloop_lag_seconds') * 1000;
  return (
    `backlog: intents open ${intents.length > 0 ? intents.join(', ') : 'none'} · ` +
    `escalations pending ${sum('spend_escalations_pending')} · ` +
    `anchoring pending ${sum('spend_anchoring_pending')} · pool waiters ${sum('spend_pool_waiters')} · ` +
    `event loop lag ${Number.isNaN(lagMs) ? 'n/a' : `${lagMs.toFixed(1)} ms`}`
  );
}

export function memoryText(memory: ServiceMemory | null): string {
  if (memory === null) return 'memory n/a';
  return (
    `rss ${memory.rss} MB, heapUsed ${memory.heapUsed}, heapTotal ${memory.heapTotal}, ` +
    `external ${memory.external}, arrayBuffers ${memory.arrayBuffers}`
  );
}

/** The route of a soak request with its intent id folded, so kinds group. */
export function routeOf(method: string, requestPath: string): string {
  return `${method} ${requestPath.replace(/\/consumer\/intents\/[^/]+/, '/consumer/intents/:id')}`;
}

interface ClientErrorKind {
  count: number;
  readonly example: string;
}

/** 4xx answers (402 challenges excepted) by route, status and error code. */
export class ClientErrors {
  private readonly kinds = new Map<string, ClientErrorKind>();

  record(route: string, status: number, body: Record<string, unknown>): void {
    const key = `${route} ${status} ${String(body.code ?? body.error ?? '-')}`;
    const known = this.kinds.get(key);
    if (known) known.count += 1;
    else this.kinds.set(key, { count: 1, example: JSON.stringify(body).slice(0, 400) });
  }

  get size(): number {
    return this.kinds.size;
  }

  /** One line per kind: count, key and its first body. */
  lines(): string[] {
    return [...this.kinds].map(([key, kind]) => `  4xx ${kind.count}× ${key}: ${kind.example}`);
  }

  addInto(total: ClientErrors): void {
    for (const [key, kind] of this.kinds) {
      const known = total.kinds.get(key);
      if (known) known.count += kind.count;
      else total.kinds.set(key, { ...kind });
    }
  }
}

/**
 * Where a local process's resident memory lies, MB, from /proc/<pid>/smaps (Linux; null
 * elsewhere): the brk heap (glibc malloc's main arena), other anonymous mappings (V8's heap pages,
 * thread arenas and stacks) and mapped files (the node binary, libraries).
 */
export function residentParts(pid: number | undefined): string | null {
  if (pid === undefined) return null;
  let smaps: string;
  try {
    smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return null;
  }
  const kb = { brk: 0, anon: 0, file: 0 };
  let kind: keyof typeof kb = 'anon';
  for (const line of smaps.split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const name = mapping[1]!;
      kind = name === '[heap]' ? 'brk' : name === '' || name.startsWith('[') ? 'anon' : 'file';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) kb[kind] += Number(rss[1]);
  }
  const mb = (n: number) => Math.round(n / 1024);
  return `brk ${mb(kb.brk)}, anon ${mb(kb.anon)}, files ${mb(kb.file)}`;
}
