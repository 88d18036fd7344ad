// Prometheus metrics: one registry per process, so that two gateways started by one test do not
// fight over global metric names. The gateway serves it at /metrics.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface HttpMetrics {
  readonly registry: Registry;
  readonly requests: Counter<'method' | 'route' | 'status'>;
  readonly durationSeconds: Histogram<'method' | 'route'>;
}

export function createHttpMetrics(options: { defaultMetrics?: boolean } = {}): HttpMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
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
  return { registry, requests, durationSeconds };
}
