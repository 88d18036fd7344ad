// A hostile front on 127.0.0.1 before the real devnet domains merchant, for the bounds the service
// holds a merchant to (issue 27, item 6). Every request goes to the merchant as it came, except:
// `skewAmount` rewrites the amount of the merchant's unpaid 402 (a malformed challenge);
// `redirectPaid` answers the paid request 307 to another origin (which records what it got);
// `hugePaid` lets the merchant settle the paid request, then streams `hugeBytes` of answer and
// counts what it managed to write before the buyer hung up.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodePaymentRequiredHeader, encodePaymentRequiredHeader } from '@x402/core/http';

export type HostileMode =
  | { readonly kind: 'pass' }
  | { readonly kind: 'skewAmount'; readonly amount: string }
  | { readonly kind: 'redirectPaid' }
  | { readonly kind: 'hugePaid'; readonly hugeBytes: number };

export interface HostileMerchant {
  readonly url: string;
  mode: HostileMode;
  /** Headers of every request the other origin (the redirect's target) received. */
  readonly elsewhereRequests: ReadonlyArray<Record<string, string | string[] | undefined>>;
  /** Bytes of the huge answers written before the buyer stopped reading. */
  readonly hugeWritten: number[];
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve, reject) =>
    server.close((error) => (error ? reject(error) : resolve())),
  );
}

async function forward(merchantUrl: string, request: IncomingMessage): Promise<Response> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string' && name !== 'host' && name !== 'connection')
      headers.set(name, value);
  }
  return fetch(`${merchantUrl}${request.url}`, {
    method: request.method,
    headers,
    redirect: 'manual',
  });
}

function copyHeaders(from: Response, to: ServerResponse, skip: string[] = []): void {
  from.headers.forEach((value, name) => {
    if (!['content-length', 'transfer-encoding', 'connection', ...skip].includes(name))
      to.setHeader(name, value);
  });
}

/** Writes `total` bytes unless the peer goes away first; resolves with how many were written. */
function writeHuge(response: ServerResponse, total: number): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  return new Promise((resolve) => {
    let written = 0;
    let closed = false;
    response.on('close', () => {
      closed = true;
      resolve(written);
    });
    const pump = () => {
      while (!closed && written < total) {
        written += chunk.length;
        if (!response.write(chunk)) {
          response.once('drain', pump);
          return;
        }
      }
      if (!closed) response.end(() => resolve(written));
    };
    pump();
  });
}

export async function startHostileMerchant(merchantUrl: string): Promise<HostileMerchant> {
  const elsewhereRequests: Array<Record<string, string | string[] | undefined>> = [];
  const hugeWritten: number[] = [];
  const elsewhere = createServer((request, response) => {
    elsewhereRequests.push({ ...request.headers });
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"stolen":true}');
  });
  const elsewhereUrl = await listen(elsewhere);
  const front: HostileMerchant = {
    url: '',
    mode: { kind: 'pass' },
    elsewhereRequests,
    hugeWritten,
    async close() {
      await closeServer(server);
      await closeServer(elsewhere);
    },
  };
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const mode = front.mode;
    const paid = request.headers['payment-signature'] !== undefined;
    if (mode.kind === 'redirectPaid' && paid) {
      response.writeHead(307, { location: `${elsewhereUrl}${request.url}` }).end();
      return;
    }
    const answer = await forward(merchantUrl, request);
    if (mode.kind === 'skewAmount' && !paid && answer.status === 402) {
      const required = decodePaymentRequiredHeader(answer.headers.get('payment-required')!);
      const skewed = {
        ...required,
        accepts: required.accepts.map((entry) => ({ ...entry, amount: mode.amount })),
      };
      copyHeaders(answer, response, ['payment-required']);
      response.setHeader('payment-required', encodePaymentRequiredHeader(skewed));
      response.writeHead(402).end(Buffer.from(await answer.arrayBuffer()));
      return;
    }
    if (mode.kind === 'hugePaid' && paid && answer.status === 200) {
      await answer.arrayBuffer();
      copyHeaders(answer, response);
      response.writeHead(200);
      hugeWritten.push(await writeHuge(response, mode.hugeBytes));
      return;
    }
    copyHeaders(answer, response);
    response.writeHead(answer.status).end(Buffer.from(await answer.arrayBuffer()));
  };
  const server = createServer((request, response) => {
    handle(request, response).catch((error: Error) => {
      if (!response.headersSent) response.writeHead(500).end(error.message);
      else response.destroy();
    });
  });
  (front as { url: string }).url = await listen(server);
  return front;
}
