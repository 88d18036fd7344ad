// Runs one local anvil node as a child process on a free loopback port and stops it cleanly, so
// the state file is written. Dev and test use only: the service itself sees a chain as an RPC URL.
// Limit: if this process is SIGKILLed the child outlives it (Node has no parent-death signal); the
// devnet records pids so the next start can reap such orphans.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { AnvilStartError, ChainIdMismatchError } from './errors';

/** OpenZeppelin 5.7 needs Cancun (mcopy); the compiler's evmVersion and the node must agree. */
export const ANVIL_HARDFORK = 'cancun';
export const ANVIL_HOST = '127.0.0.1';
export const DEFAULT_START_TIMEOUT_MS = 15_000;
export const DEFAULT_STOP_TIMEOUT_MS = 5_000;
const READY_POLL_INTERVAL_MS = 20;
const READY_PROBE_TIMEOUT_MS = 1_000;
/** Lines of anvil output kept for error messages. */
const OUTPUT_TAIL_LINES = 40;

export interface StartAnvilOptions {
  readonly chainId: number;
  /**
   * Load the chain from this file when it exists, and dump to it on stop (SIGTERM), and every
   * stateIntervalS seconds when that is given.
   */
  readonly stateFile?: string;
  /** 0 or absent: anvil picks a free port. */
  readonly port?: number;
  /** Receives every line anvil prints (it logs each transaction); absent: output is discarded. */
  readonly log?: (line: string) => void;
  /**
   * Also dump the state file every this many seconds while running, so a SIGKILL of anvil itself
   * loses at most this much; absent: only on stop. Each dump writes the whole chain, every block
   * and transaction with its traces (anvil 1.7: about 10 KB a transaction), and requests wait while
   * it writes (eth_blockNumber stalled 400–620 ms per dump at 6,000 blocks): the cost of a dump
   * grows with the chain's history (docs/operations.md "The local devnet").
   */
  readonly stateIntervalS?: number;
  readonly startTimeoutMs?: number;
  readonly stopTimeoutMs?: number;
}

export interface AnvilNode {
  readonly chainId: number;
  readonly rpcUrl: string;
  readonly pid: number;
  readonly stateFile: string | null;
  /** SIGTERM (anvil then writes its state file), SIGKILL after the stop timeout. Idempotent. */
  stop(): Promise<void>;
}

/** `ANVIL_BIN` when set, else the binary shipped in the per-platform npm package. */
export function anvilBinaryPath(): string {
  const override = process.env.ANVIL_BIN;
  if (override !== undefined && override.trim() !== '') return override;
  const cpu = process.arch === 'x64' ? 'amd64' : process.arch;
  const packageName = `@foundry-rs/anvil-${process.platform}-${cpu}`;
  try {
    return path.join(path.dirname(require.resolve(`${packageName}/package.json`)), 'bin', 'anvil');
  } catch (error) {
    throw new AnvilStartError(
      `${packageName} is not installed (only linux-x64 is published); set ANVIL_BIN to an anvil binary`,
      { binary: packageName, chainId: 0 },
      { cause: error },
    );
  }
}

// Children still running when this process exits get SIGTERM, so they dump state and do not
// linger holding ports. One listener for all children keeps the 'exit' listener count at one.
const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;

function trackChild(child: ChildProcess): void {
  if (!exitHookInstalled) {
    process.once('exit', () => {
      for (const running of liveChildren) running.kill('SIGTERM');
    });
    exitHookInstalled = true;
  }
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (hasExited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(false);
    }, timeoutMs);
    const onExit = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    child.once('exit', onExit);
  });
}

async function readChainId(rpcUrl: string): Promise<number | null> {
  try {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(READY_PROBE_TIMEOUT_MS),
    });
    if (!response.ok) return null;
    const body = (await response.json()) as { result?: string };
    return typeof body.result === 'string' ? Number.parseInt(body.result, 16) : null;
  } catch {
    return null;
  }
}

function anvilArgs(options: StartAnvilOptions): string[] {
  const args = [
    '--host',
    ANVIL_HOST,
    '--port',
    String(options.port ?? 0),
    '--chain-id',
    String(options.chainId),
    '--hardfork',
    ANVIL_HARDFORK,
    // The service never uses anvil's published dev accounts; not creating them keeps them unfunded.
    '--accounts',
    '0',
  ];
  if (options.stateFile !== undefined) {
    args.push('--state', options.stateFile);
    if (options.stateIntervalS !== undefined)
      args.push('--state-interval', String(options.stateIntervalS));
  }
  return args;
}

/** The anvil binary, checked to be executable before anything is spawned. */
function executableBinary(chainId: number): string {
  if (!Number.isSafeInteger(chainId) || chainId <= 0) {
    throw new AnvilStartError(`invalid chain id ${chainId}`, { binary: '-', chainId: 0 });
  }
  const binary = anvilBinaryPath();
  try {
    fs.accessSync(binary, fs.constants.X_OK);
  } catch (error) {
    throw new AnvilStartError(
      'binary missing or not executable (set ANVIL_BIN)',
      { binary, chainId },
      { cause: error },
    );
  }
  return binary;
}

interface AnvilOutput {
  /** The last OUTPUT_TAIL_LINES lines, for error messages. */
  readonly tail: string[];
  /** The port of anvil's "Listening on" line; rejects when anvil fails or exits first. */
  listening(timeoutMs: number): Promise<number>;
}

/** Drains both streams for the child's whole life: a full pipe would block anvil's logging. */
function followOutput(child: ChildProcess, log: ((line: string) => void) | undefined): AnvilOutput {
  const tail: string[] = [];
  let onListening: ((port: number) => void) | null = null;
  const onLine = (line: string): void => {
    tail.push(line);
    if (tail.length > OUTPUT_TAIL_LINES) tail.shift();
    log?.(line);
    const match = onListening && /Listening on 127\.0\.0\.1:(\d+)/.exec(line);
    if (match && onListening) onListening(Number(match[1]));
  };
  readline.createInterface({ input: child.stdout! }).on('line', onLine);
  readline.createInterface({ input: child.stderr! }).on('line', onLine);
  const listening = (timeoutMs: number): Promise<number> =>
    new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no "Listening on" line within ${timeoutMs} ms`)),
        timeoutMs,
      );
      onListening = (listeningPort) => {
        clearTimeout(timer);
        onListening = null;
        resolve(listeningPort);
      };
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`exited before listening (code ${code}, signal ${signal})`));
      });
    });
  return { tail, listening };
}

/** SIGTERM (anvil then writes its state file), SIGKILL after the stop timeout. */
async function stopChild(child: ChildProcess, stopTimeoutMs: number): Promise<void> {
  if (hasExited(child)) return;
  child.kill('SIGTERM');
  if (await waitForExit(child, stopTimeoutMs)) return;
  child.kill('SIGKILL');
  await waitForExit(child, stopTimeoutMs);
}

/** Polls eth_chainId until anvil answers; a failure when it exits or the deadline passes first. */
async function answeredChainId(
  child: ChildProcess,
  rpcUrl: string,
  deadlineMs: number,
  startTimeoutMs: number,
): Promise<{ chainId: number } | { failure: string }> {
  for (;;) {
    if (hasExited(child))
      return {
        failure: `exited while starting (code ${child.exitCode}, signal ${child.signalCode})`,
      };
    const answered = await readChainId(rpcUrl);
    if (answered !== null) return { chainId: answered };
    if (Date.now() > deadlineMs)
      return { failure: `eth_chainId did not answer within ${startTimeoutMs} ms` };
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_INTERVAL_MS));
  }
}

export async function startAnvil(options: StartAnvilOptions): Promise<AnvilNode> {
  const { chainId } = options;
  const binary = executableBinary(chainId);
  if (options.stateFile !== undefined)
    fs.mkdirSync(path.dirname(options.stateFile), { recursive: true });

  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const stopTimeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
  const child = spawn(binary, anvilArgs(options), { stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);
  const output = followOutput(child, options.log);
  const stop = (): Promise<void> => stopChild(child, stopTimeoutMs);
  const fail = async (message: string, cause?: unknown): Promise<never> => {
    await stop();
    throw new AnvilStartError(
      message,
      { binary, chainId, outputTail: [...output.tail] },
      { cause },
    );
  };

  const deadlineMs = Date.now() + startTimeoutMs;
  const port = await output
    .listening(startTimeoutMs)
    .catch((error: Error) => fail(error.message, error));
  const rpcUrl = `http://${ANVIL_HOST}:${port}`;
  const answer = await answeredChainId(child, rpcUrl, deadlineMs, startTimeoutMs);
  if ('failure' in answer) return fail(answer.failure);
  if (answer.chainId !== chainId) {
    await stop();
    throw new ChainIdMismatchError({
      rpcUrl,
      expectedChainId: chainId,
      actualChainId: answer.chainId,
    });
  }
  if (child.pid === undefined) return fail('no pid after start');
  return { chainId, rpcUrl, pid: child.pid, stateFile: options.stateFile ?? null, stop };
}
