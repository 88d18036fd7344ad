// Sends one attack request byte for byte (node:http, so raw paths, odd methods and any header
// survive: fetch would normalise them) and reads the whole answer, or reports that none came:
// a timeout is a hang, a closed connection without a status line is "no answer".
import http from 'node:http';

export interface AttackRequest {
  readonly method: string;
  /** Path and query exactly as sent (bytes 0x21–0xff, latin1). */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer | null;
  /** What the request aimed at, for grouping findings: a route template, or "unknown path". */
  readonly label: string;
  /** A route of the table (rest), the GraphQL endpoint, another edge endpoint, or no known path. */
  readonly kind: 'rest' | 'graphql' | 'edge' | 'unknown';
}

export type AttackAnswer =
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly headers: http.IncomingHttpHeaders;
      readonly body: Buffer;
      readonly ms: number;
    }
  | { readonly kind: 'hang'; readonly ms: number }
  | { readonly kind: 'no-answer'; readonly error: string; readonly ms: number };

/** Answers larger than this are cut; no documented answer comes near it. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export function sendAttack(
  baseUrl: string,
  request: AttackRequest,
  timeoutMs: number,
  agent: http.Agent,
): Promise<AttackAnswer> {
  const url = new URL(baseUrl);
  const started = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: AttackAnswer) => {
      if (settled) return;
      settled = true;
      resolve(answer);
    };
    const headers: Record<string, string> = { ...request.headers };
    if (request.body !== null) headers['content-length'] = String(request.body.length);
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: request.method,
        path: request.path,
        headers,
        agent,
        insecureHTTPParser: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
        });
        res.on('end', () =>
          finish({
            kind: 'response',
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            ms: Date.now() - started,
          }),
        );
        res.on('error', (error) =>
          finish({ kind: 'no-answer', error: error.message, ms: Date.now() - started }),
        );
      },
    );
    req.setTimeout(timeoutMs, () => {
      finish({ kind: 'hang', ms: Date.now() - started });
      req.destroy();
    });
    req.on('error', (error) =>
      finish({ kind: 'no-answer', error: error.message, ms: Date.now() - started }),
    );
    req.end(request.body ?? undefined);
  });
}

/** Bytes a terminal would hide or mangle (controls, latin1, soft hyphen) written as \xHH. */
function visible(text: string): string {
  return text.replace(
    /[^\x21-\x7e]/g,
    (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/** One line for a report: method, path (cut), headers that matter, and the body's start. */
export function describeRequest(request: AttackRequest): string {
  const path =
    request.path.length > 120
      ? `${visible(request.path.slice(0, 120))}…(${request.path.length} chars)`
      : visible(request.path);
  const headers = Object.entries(request.headers)
    .map(([name, value]) => `${name}: ${value.length > 60 ? `${value.slice(0, 60)}…` : value}`)
    .join('; ');
  const body =
    request.body === null
      ? ''
      : ` body(${request.body.length}B): ${JSON.stringify(request.body.subarray(0, 160).toString('latin1'))}`;
  return `${request.method} ${path}${headers ? ` [${headers}]` : ''}${body}`;
}
