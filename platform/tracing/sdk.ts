// The OpenTelemetry SDK of a process with tracing on (loaded by index.ts only then): spans batched
// to the OTLP/HTTP collector at OTEL_EXPORTER_OTLP_ENDPOINT (JSON, to `<endpoint>/v1/traces`; the
// exporter also reads the other OTEL_EXPORTER_OTLP_* and OTEL_BSP_* variables), W3C trace context,
// and the instrumentations of node:http (server and client, probes left out) and pg.
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

export interface Tracing {
  /** Exports what is still buffered and stops; call once, last. */
  shutdown(): Promise<void>;
}

/** Scrapes and probes would drown the traces of real requests. */
const UNTRACED_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

export function startTracing(options: { serviceName: string }): Tracing {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME ?? options.serviceName,
    }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]),
      }),
      // requireParentSpan: pool housekeeping outside any request (LISTEN, workers' polls) is not traced.
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  let stopped: Promise<void> | null = null;
  return {
    shutdown: () =>
      (stopped ??= (async () => {
        await provider.forceFlush();
        unregister();
        await provider.shutdown();
      })()),
  };
}
