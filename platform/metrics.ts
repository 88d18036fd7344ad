// Prometheus metrics: one registry per process, so that two gateways started by one test do not
// fight over global metric names. Every role serves it at /metrics (docs/operations.md lists the
// series). Besides the HTTP and Node figures it holds the business counters that are incremented
// where the event happens (paid calls, fees, settlement latency, webhook attempts) and the series
// the composition root adds that are read from SQL at scrape time (sqlCollectors.ts).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The counters a role increments where the event happens. */
export interface BusinessCounters {
  /** Paid x402 calls booked, by route (`METHOD /path`) and purpose (FEE or FUNDING). */
  readonly paidCalls: Counter<'route' | 'purpose'>;
  /**
   * Amounts booked by paid calls in the asset's atomic units (USDT0: 6 decimals), by route and
   * purpose. A float64 counter is exact up to 2^53 atomic units (9e9 USDT0); the increment is
   * checked to be within that range, so no rounding ever enters it.
   */
  readonly paidAtomic: Counter<'route' | 'purpose' | 'asset'>;
  /** Seconds from handing an x402 payment to the rail to its receipt's answer, by outcome. */
  readonly settlementSeconds: Histogram<'outcome'>;
  /** Owner webhook delivery attempts by outcome (delivered, retrying, failed). */
  readonly webhookDeliveries: Counter<'outcome'>;
}

export interface HttpMetrics {
  readonly registry: Registry;
  readonly requests: Counter<'method' | 'route' | 'status'>;
  readonly durationSeconds: Histogram<'method' | 'route'>;
  readonly business: BusinessCounters;
}

function businessCounters(registry: Registry): BusinessCounters {
  return {
    paidCalls: new Counter({
      name: 'spend_paid_calls_total',
      help: 'Paid x402 calls booked, by route and purpose',
      labelNames: ['route', 'purpose'] as const,
      registers: [registry],
    }),
    paidAtomic: new Counter({
      name: 'spend_paid_atomic_total',
      help: 'Amount booked by paid x402 calls in atomic units of the asset (USDT0: 1e-6), by route, purpose and asset',
      labelNames: ['route', 'purpose', 'asset'] as const,
      registers: [registry],
    }),
    settlementSeconds: new Histogram({
      name: 'spend_settlement_seconds',
      help: 'Seconds from handing an x402 payment to the rail until its receipt answered, by outcome',
      labelNames: ['outcome'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: 'spend_webhook_deliveries_total',
      help: 'Owner webhook delivery attempts by outcome (delivered, retrying, failed)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
  };
}

/** A counter increment of a bigint amount, refused when a float64 could not hold it exactly. */
export function exactIncrement(amount: bigint): number {
  if (amount < 0n || amount > BigInt(Number.MAX_SAFE_INTEGER))
    throw new RangeError(`amount ${amount} is outside a counter's exact range`);
  return Number(amount);
}

/**
 * Bytes held by ArrayBuffers and Buffers (process.memoryUsage().arrayBuffers, part of
 * nodejs_external_memory_bytes): prom-client's defaults leave it out, and the soak reads it to tell
 * buffer growth from heap growth.
 */
function arrayBufferGauge(registry: Registry): void {
  new Gauge({
    name: 'nodejs_array_buffers_bytes',
    help: 'Memory allocated for ArrayBuffers and Buffers, in bytes',
    registers: [registry],
    collect() {
      this.set(process.memoryUsage().arrayBuffers);
    },
  });
}

export function createHttpMetrics(options: { defaultMetrics?: boolean } = {}): HttpMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry });
    arrayBufferGauge(registry);
  }
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, matched route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const durationSeconds = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method and matched route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return { registry, requests, durationSeconds, business: businessCounters(registry) };
}
