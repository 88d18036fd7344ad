// The preflight bench's arithmetic over interleaved rounds: one scenario measured in several short
// slices (alternating with the other stacks, so machine load from other processes falls on every
// stack alike) is summed into one row, and the split deployment is judged against in-process.
import { percentile } from './stats';

/** One measured slice of one scenario. */
export interface Slice {
  latenciesMs: Float64Array;
  elapsedSeconds: number;
  statuses: ReadonlyArray<[number, number]>;
  /** Seconds of event-loop activity of the server thread, and the wall seconds they were read over. */
  loopActiveSeconds: number;
  loopWallSeconds: number;
  /** Busy and total machine ticks, or null off Linux. */
  machineTicks: { busy: number; total: number } | null;
  /** CPU ms of this process without the client thread, and of PostgreSQL, or null off Linux. */
  serverCpuMs: number | null;
  postgresCpuMs: number | null;
}

export interface Result {
  name: string;
  policies: number;
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Map<number, number>;
  /** The server thread's event-loop utilisation while measuring (1 = never idle). */
  serverBusy: number;
  /** Share of the machine's CPU time that was busy while measuring, or null off Linux. */
  machineBusy: number | null;
  /** CPU per request of this process without the client thread (gateway and subgraphs, GC included). */
  serverCpuMsPerRequest: number | null;
  /** CPU per request of every PostgreSQL process on the machine (backends, WAL writer, …). */
  postgresCpuMsPerRequest: number | null;
}

function sumOrNull(values: ReadonlyArray<number | null>): number | null {
  return values.some((value) => value === null)
    ? null
    : values.reduce<number>((sum, value) => sum + (value ?? 0), 0);
}

/** The slices of one scenario as one row: rates over the summed time, percentiles over all latencies. */
export function summarize(name: string, policies: number, slices: readonly Slice[]): Result {
  const latencies = Float64Array.from(slices.flatMap((slice) => [...slice.latenciesMs])).sort();
  const elapsed = slices.reduce((sum, slice) => sum + slice.elapsedSeconds, 0);
  const statuses = new Map<number, number>();
  for (const slice of slices)
    for (const [status, count] of slice.statuses)
      statuses.set(status, (statuses.get(status) ?? 0) + count);
  const loopWall = slices.reduce((sum, slice) => sum + slice.loopWallSeconds, 0);
  const busy = sumOrNull(slices.map((slice) => slice.machineTicks?.busy ?? null));
  const total = sumOrNull(slices.map((slice) => slice.machineTicks?.total ?? null));
  const serverCpu = sumOrNull(slices.map((slice) => slice.serverCpuMs));
  const postgresCpu = sumOrNull(slices.map((slice) => slice.postgresCpuMs));
  const requests = latencies.length;
  return {
    name,
    policies,
    requests,
    perSecond: elapsed === 0 ? 0 : Math.round(requests / elapsed),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    statuses,
    serverBusy:
      loopWall === 0
        ? 0
        : slices.reduce((sum, slice) => sum + slice.loopActiveSeconds, 0) / loopWall,
    machineBusy: busy === null || total === null || total === 0 ? null : busy / total,
    serverCpuMsPerRequest: serverCpu === null || requests === 0 ? null : serverCpu / requests,
    postgresCpuMsPerRequest: postgresCpu === null || requests === 0 ? null : postgresCpu / requests,
  };
}

/** The split deployment may cost at most this share of in-process preflight throughput. */
export const SPLIT_MAX_LOSS = 0.15;

/** A CPU figure in ms, or '-' where there is none (off Linux). */
export const ms = (value: number | null): string =>
  value === null ? '-' : `${value.toFixed(2)} ms`;

/**
 * The verdict line on the split deployment's HTTP hop against the in-process transport, judged on
 * throughput; the CPU each mode spent per preflight (all of its processes, and PostgreSQL) follows,
 * so the hop's own cost reads apart from how the machine's cores were shared.
 */
export function splitVerdict(split: Result, inProcess: Result): string {
  const loss = inProcess.perSecond === 0 ? 1 : 1 - split.perSecond / inProcess.perSecond;
  const met = loss <= SPLIT_MAX_LOSS;
  const hopCpu =
    split.serverCpuMsPerRequest === null || inProcess.serverCpuMsPerRequest === null
      ? null
      : split.serverCpuMsPerRequest - inProcess.serverCpuMsPerRequest;
  return (
    `target split deployment (gateway → subgraphs over HTTP) within ${SPLIT_MAX_LOSS * 100} % of in-process ` +
    `(${split.policies === 1 ? 'hot policy' : 'spread'}): ${split.perSecond}/s vs ${inProcess.perSecond}/s, ` +
    `${(loss * 100).toFixed(1)} % lower — ${met ? 'met' : 'NOT met'}` +
    ` (server CPU per preflight ${ms(split.serverCpuMsPerRequest)} vs ${ms(inProcess.serverCpuMsPerRequest)}, ` +
    `the hop ${hopCpu === null ? '-' : `${hopCpu >= 0 ? '+' : ''}${hopCpu.toFixed(2)} ms`}; ` +
    `PostgreSQL ${ms(split.postgresCpuMsPerRequest)} vs ${ms(inProcess.postgresCpuMsPerRequest)})\n`
  );
}
