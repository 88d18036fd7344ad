// The events benchmark's commit clock: a worker thread of the clients' process (bench/eventsClients.ts)
// holding a LISTEN connection of its own on escalation_updated. PostgreSQL sends a NOTIFY to every
// listener right after the transaction that raised it commits, so the instant this independent
// listener hears an escalation's NOTIFY is its commit instant (later by PostgreSQL's own delivery,
// well under a millisecond on 127.0.0.1). A thread of its own, so that ten thousand sockets being
// read on the clients' main thread never delay the clock. It posts { pollRef, heardAt } (epoch ms,
// the same clock the sockets' arrivals are taken with) for each NOTIFY, and 'ready' once listening.
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { Client } from 'pg';

export type CommitClockMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'heard'; readonly pollRef: string; readonly heardAt: number };

async function listen(databaseUrl: string): Promise<void> {
  const client = new Client({
    connectionString: databaseUrl,
    application_name: 'bench-commit-clock',
  });
  client.on('notification', (message) => {
    const heardAt = performance.timeOrigin + performance.now();
    const pollRef = (JSON.parse(message.payload ?? '{}') as { pollRef?: unknown }).pollRef;
    if (typeof pollRef === 'string')
      parentPort?.postMessage({ type: 'heard', pollRef, heardAt } satisfies CommitClockMessage);
  });
  await client.connect();
  await client.query('LISTEN escalation_updated');
  parentPort?.postMessage({ type: 'ready' } satisfies CommitClockMessage);
  parentPort?.on('message', () => {
    void client.end().finally(() => process.exit(0));
  });
}

listen((workerData as { databaseUrl: string }).databaseUrl).catch((error: unknown) => {
  process.stderr.write(`commit clock failed: ${String(error)}\n`);
  process.exit(1);
});
