// Distributed traces, as cheap as nothing when off: the SDK (platform/tracing/sdk.ts) is loaded
// only when OTEL_EXPORTER_OTLP_ENDPOINT is set, before the process requires http or pg; otherwise
// only @opentelemetry/api is here (already loaded by @apollo/gateway), whose tracer is a no-op.
// The spans the instrumentations cannot see are made here: a subgraph operation (in-process or at
// the subgraph's HTTP server) and the gateway's HTTP hop to a subgraph, which carries the W3C
// `traceparent` header (the gateway's undici client is not node:http, so no instrumentation
// injects it).
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';

export const TRACER_NAME = 'spend-control';

/** The environment variable that turns tracing on (the OTLP/HTTP collector's base URL). */
export const OTLP_ENDPOINT_VARIABLE = 'OTEL_EXPORTER_OTLP_ENDPOINT';

// A type-only import: erased at run time, it loads nothing of the SDK.
import type { Tracing } from './sdk';

export type { Tracing };

/**
 * Starts the SDK when OTEL_EXPORTER_OTLP_ENDPOINT is set; null (and nothing loaded) otherwise.
 * Call before anything requires http or pg, so that their instrumentations apply.
 */
export function startTracingFromEnv(env: NodeJS.ProcessEnv, serviceName: string): Tracing | null {
  const endpoint = env[OTLP_ENDPOINT_VARIABLE]?.trim();
  if (!endpoint) return null;
  // Required here, not imported above: when tracing is off the SDK is never loaded.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sdk = require('./sdk') as typeof import('./sdk');
  const started = sdk.startTracing({ serviceName });
  tracingOn = true;
  return started;
}

/** False until the SDK started: the helpers below then only run the work, with no span at all. */
let tracingOn = false;

/** Whether spans are recorded (callers that would merge several requests' work keep them apart). */
export function tracingActive(): boolean {
  return tracingOn;
}

function ended(span: Span, error: unknown): void {
  span.recordException(error as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
}

/** Runs `work` inside a span of its own (the active one for everything it starts). */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes },
  work: () => Promise<T>,
): Promise<T> {
  if (!tracingOn) return work();
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, options, async (span) => {
    try {
      return await work();
    } catch (error) {
      ended(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A client span for an outbound hop whose headers carry its context (W3C traceparent). */
export function inClientSpan<T>(
  name: string,
  attributes: Attributes,
  headers: Record<string, string>,
  work: (headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  if (!tracingOn) return work(headers);
  return inSpan(name, { kind: SpanKind.CLIENT, attributes }, () => {
    const carried = { ...headers };
    propagation.inject(context.active(), carried);
    return work(carried);
  });
}

/**
 * Starts a span active for the rest of an express request (until the response ends): `next` runs
 * inside it, so everything the request starts is its child.
 */
export function spanForRequest(
  name: string,
  attributes: Attributes,
  onEnd: (end: (statusCode: number) => void) => void,
  next: () => void,
): void {
  if (!tracingOn) return next();
  const tracer = trace.getTracer(TRACER_NAME);
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes });
  onEnd((statusCode) => {
    if (statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  context.with(trace.setSpan(context.active(), span), next);
}

export { SpanKind };
