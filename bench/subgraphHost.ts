// The subgraph side of the preflight bench's split deployment: a child process serving every
// subgraph over HTTP on free ports of 127.0.0.1, as the subgraph roles do when deployed apart from
// the gateway. Its parent sends { databaseUrl, actorSecretHex } and receives { urls } once all
// listen; a 'stop' message (or the parent going away) stops them.
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import 'reflect-metadata';
import { startSubgraph, type RunningSubgraph } from '../cli/stack';
import { SUBGRAPH_NAMES } from '../platform/db/migrate';
import { createPool } from '../platform/db/pool';
import { silentLogger } from '../platform/log';

export interface SubgraphHostStart {
  databaseUrl: string;
  actorSecretHex: string;
}

export interface SubgraphHostReady {
  urls: Record<string, string>;
}

async function host(start: SubgraphHostStart): Promise<() => Promise<void>> {
  const db = createPool(start.databaseUrl, { max: 20, applicationName: 'bench-subgraph-host' });
  const started: RunningSubgraph[] = [];
  for (const name of SUBGRAPH_NAMES)
    started.push(
      await startSubgraph(
        name,
        {
          db,
          databaseUrl: start.databaseUrl,
          actorSecret: Buffer.from(start.actorSecretHex, 'hex'),
          log: silentLogger,
        },
        { host: '127.0.0.1', port: 0 },
      ),
    );
  const urls = Object.fromEntries(started.map((subgraph) => [subgraph.name, subgraph.http!.url]));
  process.send!({ urls } satisfies SubgraphHostReady);
  return async () => {
    for (const subgraph of started.reverse()) await subgraph.stop();
    await db.end();
  };
}

if (require.main === module && process.send !== undefined) {
  let stop: (() => Promise<void>) | null = null;
  process.on('message', (message: SubgraphHostStart | 'stop') => {
    if (message === 'stop') {
      void (stop ?? (async () => undefined))().finally(() => process.exit(0));
      return;
    }
    host(message).then(
      (stopper) => {
        stop = stopper;
      },
      (error: unknown) => {
        process.stderr.write(`subgraph host failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  });
  process.on('disconnect', () => process.exit(0));
}
