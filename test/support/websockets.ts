// Websocket test support: graphql-ws clients that record how they closed, subscriptions that record
// every answer (data or error), and heavy clients on a thread of their own (the /healthz probe run
// beside an attack is in healthProbe.ts). Waits are by content with a deadline.
import { Worker } from 'node:worker_threads';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export interface RecordedClient {
  readonly client: Client;
  /** Resolves with the close code once the socket closes (1000 after dispose()). */
  readonly closed: Promise<number>;
  /** Resolves once the server acknowledged connection_init. */
  readonly connected: Promise<void>;
  dispose(): Promise<void>;
}

export function openClient(
  wsUrl: string,
  connectionParams: Record<string, unknown>,
): RecordedClient {
  // The close is what these tests look at (`closed`), not something to print.
  const client = createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 0,
    connectionParams,
    onNonLazyError: () => undefined,
  });
  const closed = new Promise<number>((resolve) =>
    client.on('closed', (event) => resolve((event as { code?: number }).code ?? 0)),
  );
  const connected = new Promise<void>((resolve) => client.on('connected', () => resolve()));
  return { client, closed, connected, dispose: async () => client.dispose() };
}

export interface RecordedSubscription {
  readonly data: Array<Record<string, any>>;
  /** The errors of an `error` message (or of a `next` carrying errors), and what ended the sink. */
  readonly errors: Array<{ message?: string; extensions?: Record<string, unknown>; code?: number }>;
  /** True once the subscription got anything at all: a result, an error or its completion. */
  answered(): boolean;
  /** True once the server completed the subscription. */
  completed(): boolean;
  unsubscribe(): void;
}

export function record(
  client: Client,
  query: string,
  variables: Record<string, unknown> = {},
): RecordedSubscription {
  const data: RecordedSubscription['data'] = [];
  const errors: RecordedSubscription['errors'] = [];
  let completed = false;
  const unsubscribe = client.subscribe<Record<string, any>>(
    { query, variables },
    {
      next: (result) => {
        if (result.errors) errors.push(...(result.errors as RecordedSubscription['errors']));
        if (result.data) data.push(result.data);
      },
      error: (error) => {
        errors.push(
          ...(Array.isArray(error) ? error : [error as RecordedSubscription['errors'][number]]),
        );
      },
      complete: () => {
        completed = true;
      },
    },
  );
  return {
    data,
    errors,
    answered: () => data.length > 0 || errors.length > 0 || completed,
    completed: () => completed,
    unsubscribe,
  };
}

/** Resolves once `condition` holds; fails with `what` after `timeoutMs`. */
export async function until(
  condition: () => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** What one subscription of a RemoteClient got: how many `next` results, and the error codes. */
export interface RemoteOutcome {
  readonly data: number;
  /** extensions.code of each error; `close:<code>` when the socket closed under it. */
  readonly codes: unknown[];
}

export interface RemoteClient {
  /** Once every subscription got an error or `settleAtData` results: what each got. */
  readonly settled: Promise<RemoteOutcome[]>;
  dispose(): Promise<void>;
}

// Plain JavaScript: a worker thread loads it through Node itself, not through jest's transform.
const REMOTE_CLIENT_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const WebSocket = require('ws');
const { createClient } = require('graphql-ws');
const { wsUrl, connectionParams, query, variables, count, settleAtData } = workerData;
const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0, connectionParams, onNonLazyError: () => undefined });
const outcomes = Array.from({ length: count }, () => ({ data: 0, codes: [] }));
let reported = false;
const check = () => {
  if (reported || !outcomes.every((outcome) => outcome.codes.length > 0 || outcome.data >= settleAtData)) return;
  reported = true;
  parentPort.postMessage(outcomes);
};
const codesOf = (error) => Array.isArray(error) ? error.map((e) => e.extensions && e.extensions.code) : ['close:' + (error && error.code)];
for (const outcome of outcomes) {
  client.subscribe({ query, variables }, {
    next: (result) => {
      if (result.errors) outcome.codes.push(...codesOf(result.errors));
      if (result.data) outcome.data += 1;
      check();
    },
    error: (error) => { outcome.codes.push(...codesOf(error)); check(); },
    complete: () => undefined,
  });
}
parentPort.on('message', async () => { await client.dispose(); parentPort.close(); });
`;

/**
 * A graphql-ws client on a thread of its own, as on another machine: its parsing and bookkeeping
 * never run on the server's event loop, so what /healthz measures is the server alone.
 */
export function remoteClient(options: {
  wsUrl: string;
  connectionParams: Record<string, unknown>;
  query: string;
  variables?: Record<string, unknown>;
  count: number;
  settleAtData: number;
}): RemoteClient {
  const worker = new Worker(REMOTE_CLIENT_SOURCE, {
    eval: true,
    workerData: { variables: {}, ...options },
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const settled = new Promise<RemoteOutcome[]>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    void exited.then(() =>
      reject(new Error('the client thread ended before its subscriptions settled')),
    );
  });
  // Disposed before it settled: that test failed already; no unhandled rejection on top.
  settled.catch(() => undefined);
  return {
    settled,
    async dispose() {
      worker.postMessage('dispose');
      await exited;
    },
  };
}
