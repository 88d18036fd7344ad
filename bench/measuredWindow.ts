// The measured window of a client bench: requests before the warm-up ends are sent but not
// counted; from the first counted answer on, each answer's latency and status are kept, with the
// client thread's CPU time over the window.
import { threadCpuMs } from './cpuTime';

export interface WindowFigures {
  readonly latenciesMs: Float64Array;
  readonly elapsedSeconds: number;
  readonly statuses: Array<[number, number]>;
  readonly clientCpuMs: number | null;
}

export class MeasuredWindow {
  private readonly warmupUntil: number;
  /** Clients send while Date.now() is before this. */
  readonly until: number;
  private readonly latencies: number[] = [];
  private readonly statuses = new Map<number, number>();
  private measuredStart = 0;
  private cpuStart: number | null = null;

  constructor(warmupSeconds: number, seconds: number) {
    this.warmupUntil = Date.now() + warmupSeconds * 1000;
    this.until = this.warmupUntil + seconds * 1000;
  }

  /** One answer, of a request sent at `started` (process.hrtime.bigint()). */
  record(started: bigint, status: number): void {
    const now = Date.now();
    if (now < this.warmupUntil) return;
    if (this.measuredStart === 0) {
      this.measuredStart = now;
      this.cpuStart = threadCpuMs();
    }
    this.latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }

  /** The window's figures, once every client has stopped. */
  figures(): WindowFigures {
    const cpuEnd = threadCpuMs();
    return {
      latenciesMs: Float64Array.from(this.latencies),
      elapsedSeconds: (Date.now() - this.measuredStart) / 1000,
      statuses: [...this.statuses],
      clientCpuMs: this.cpuStart === null || cpuEnd === null ? null : cpuEnd - this.cpuStart,
    };
  }
}
