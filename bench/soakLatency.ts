// What the soak times: each operation kind (free, paid, preflight, escalation, purchase) and each
// HTTP step of them (route with ids folded, unpaid or paid) as count and p50/p99 per minute, so a
// cost that grows with history shows as the step whose latency climbs; and the run's p50 of each
// operation minute by minute, printed before the verdict, so the trend reads at a glance.
import { percentile } from './stats';

/** Latencies in ms by key (an operation kind or an HTTP step), for one minute or a whole run. */
export class Latencies {
  private readonly samples = new Map<string, number[]>();

  record(key: string, ms: number): void {
    const list = this.samples.get(key);
    if (list) list.push(ms);
    else this.samples.set(key, [ms]);
  }

  /** Count, p50 and p99 (ms) per key, keys in the order they were first recorded. */
  summary(): Array<{ key: string; count: number; p50: number; p99: number }> {
    return [...this.samples].map(([key, list]) => {
      const sorted = Float64Array.from(list).sort();
      return { key, count: list.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
    });
  }

  /** One line per key: `  <label> <key>: n <count>, p50 <ms> ms, p99 <ms> ms`. */
  lines(label: string): string[] {
    const width = Math.max(0, ...[...this.samples.keys()].map((key) => key.length));
    return this.summary().map(
      ({ key, count, p50, p99 }) =>
        `  ${label} ${key.padEnd(width)}: n ${count}, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
    );
  }
}

/** The run's p50 per operation and minute: one line per operation, minutes left to right. */
export class LatencyTrend {
  private readonly byKey = new Map<string, Array<number | null>>();
  private minutes = 0;

  /** Adds one minute's summary; a key absent in a minute shows as `-`. */
  addMinute(latencies: Latencies): void {
    for (const { key, p50 } of latencies.summary()) {
      const row = this.byKey.get(key) ?? Array<number | null>(this.minutes).fill(null);
      row[this.minutes] = p50;
      this.byKey.set(key, row);
    }
    this.minutes += 1;
  }

  lines(): string[] {
    if (this.minutes === 0) return [];
    const width = Math.max(...[...this.byKey.keys()].map((key) => key.length));
    const header = `soak p50 ms by minute (1…${this.minutes}):`;
    const rows = [...this.byKey].map(([key, row]) => {
      const cells = Array.from({ length: this.minutes }, (_, i) => {
        const p50 = row[i];
        return p50 === null || p50 === undefined ? '-' : p50.toFixed(0);
      });
      return `  ${key.padEnd(width)} ${cells.join(' ')}`;
    });
    return [header, ...rows];
  }
}
