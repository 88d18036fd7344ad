// `spend-control start` in its own process as the process tests run it: a free port (below the
// ephemeral range), the environment of embedded defaults (no DATABASE_URL, no RPC URLs), and a
// start that resolves once the CLI prints that every role is ready.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../platform/paths';
export { freePort } from '../../platform/freePort';

export const CLI = path.join(projectRoot(), 'dist', 'cli', 'main.js');

export function cliEnv(
  dataDir: string,
  port: number,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    ...extra,
  };
  for (const name of [
    'DATABASE_URL',
    'FUNDING_RPC_URL',
    'SETTLEMENT_RPC_URL',
    'NODE_ENV',
    'ADMIN_TOKEN_HASHES',
  ])
    delete env[name];
  return env;
}

export interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

export function startCli(env: NodeJS.ProcessEnv): Promise<Started> {
  const child = spawn(process.execPath, [CLI, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`start did not become ready:\n${output}`)),
      90_000,
    );
    const onData = () => {
      if (output.includes('ready           role all')) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve({ child, output: () => output, exited });
      }
    };
    child.stdout!.on('data', onData);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`start exited with ${code} before ready:\n${output}`));
    });
  });
}
