// A real OTLP/HTTP trace receiver on 127.0.0.1, as a collector would stand: POST /v1/traces with
// the JSON encoding of ExportTraceServiceRequest, decoded into flat spans (service name from the
// resource, attributes as plain values) for a test to follow by trace id and parent links.
import { serveOnLoopback } from '../../devnet/peers/loopback';

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly service: string;
  readonly attributes: Readonly<Record<string, unknown>>;
}

export interface OtlpReceiver {
  readonly url: string;
  readonly spans: readonly ReceivedSpan[];
  stop(): Promise<void>;
}

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}

function plain(attributes: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries(
    (attributes ?? []).map(({ key, value }) => [key, Object.values(value)[0]]),
  );
}

function spansOf(request: any): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const service = String(plain(resourceSpans.resource?.attributes)['service.name'] ?? '');
    for (const scopeSpans of resourceSpans.scopeSpans ?? [])
      for (const span of scopeSpans.spans ?? [])
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          service,
          attributes: plain(span.attributes),
        });
  }
  return spans;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = await serveOnLoopback((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      try {
        spans.push(...spansOf(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  return { url: server.url, spans, stop: () => server.stop() };
}
