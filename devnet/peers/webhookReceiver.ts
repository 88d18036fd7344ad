// A local HTTP endpoint that records every request it gets (method, path, headers, raw body) and
// answers 200 unless told to fail: the owner's webhook in channel tests, and the service's
// Telegram/Slack callback URLs in the stand-ins' own tests.
import express, { type Request, type Response } from 'express';
import { FailureSwitch } from './failures';
import { DEFAULT_WAIT_TIMEOUT_MS, Inbox } from './inbox';
import { serveOnLoopback } from './loopback';

export const WEBHOOK_RECEIVER_MAX_BODY_BYTES = 1024 * 1024;

export interface WebhookReceiverOptions {
  /** 0 (default) picks a free port. */
  readonly port?: number;
}

export interface ReceivedRequest {
  readonly method: string;
  /** Path and query, e.g. /hooks/owner?x=1. */
  readonly path: string;
  /** Lowercased names, as Node delivers them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body exactly as received, decoded as UTF-8. */
  readonly rawBody: string;
}

export interface WebhookReceiver {
  /** http://127.0.0.1:<port>; any path under it is recorded. */
  readonly url: string;
  readonly requests: readonly ReceivedRequest[];
  waitForRequest(
    predicate?: (request: ReceivedRequest) => boolean,
    timeoutMs?: number,
  ): Promise<ReceivedRequest>;
  /** The next `times` requests are recorded and answered with HTTP `status`. */
  failNext(status: number, times?: number): void;
  /** Answers normally again, whatever failNext armed. */
  clearFailures(): void;
  stop(): Promise<void>;
}

export async function startWebhookReceiver(
  options: WebhookReceiverOptions = {},
): Promise<WebhookReceiver> {
  const requests = new Inbox<ReceivedRequest>('webhook request');
  const failures = new FailureSwitch();
  const app = express();
  app.disable('x-powered-by');
  app.use(express.raw({ type: () => true, limit: WEBHOOK_RECEIVER_MAX_BODY_BYTES }));
  app.use((req: Request, res: Response) => {
    const rawBody = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
    requests.record({
      method: req.method,
      path: req.originalUrl,
      headers: { ...req.headers },
      rawBody,
    });
    const status = failures.take();
    res.status(status ?? 200).json(status === null ? { ok: true } : { ok: false });
  });
  const server = await serveOnLoopback(app, options.port ?? 0);
  return {
    url: server.url,
    requests: requests.items,
    waitForRequest: (predicate, timeoutMs = DEFAULT_WAIT_TIMEOUT_MS) =>
      requests.waitFor(predicate, timeoutMs),
    failNext: (status, times = 1) => failures.arm(status, times),
    clearFailures: () => failures.clear(),
    async stop() {
      requests.close();
      await server.stop();
    },
  };
}
