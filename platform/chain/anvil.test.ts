// startAnvil against the real binary: free loopback ports, the requested chain id, Cancun, no dev
// accounts, state written on stop and loaded on the next start, clear failures.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type AnvilNode, startAnvil } from './anvil';
import { createAnvilTestClient, createChainPublicClient } from './clients';
import { AnvilStartError } from './errors';

async function rpc(rpcUrl: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startAnvil', () => {
  const started: AnvilNode[] = [];
  let tempDir: string;

  beforeAll(() => {
    tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-test-'));
  });

  afterAll(async () => {
    await Promise.all(started.map((node) => node.stop()));
    fs.rmSync(tempDir, { recursive: true, force: true });
  });

  it('starts two chains on distinct free loopback ports with the requested chain ids', async () => {
    const [funding, settlement] = await Promise.all([
      startAnvil({ chainId: 196 }),
      startAnvil({ chainId: 8453 }),
    ]);
    started.push(funding, settlement);

    expect(funding.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(settlement.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(funding.rpcUrl).not.toBe(settlement.rpcUrl);
    expect(await createChainPublicClient(funding).getChainId()).toBe(196);
    expect(await createChainPublicClient(settlement).getChainId()).toBe(8453);
  });

  it('creates no dev accounts, so the published mnemonic holds nothing', async () => {
    const node = await startAnvil({ chainId: 196 });
    started.push(node);
    expect(await rpc(node.rpcUrl, 'eth_accounts')).toEqual([]);
    const firstDevAccount = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
    expect(await createChainPublicClient(node).getBalance({ address: firstDevAccount })).toBe(0n);
  });

  it('passes every output line to log while running', async () => {
    const lines: string[] = [];
    const node = await startAnvil({ chainId: 196, log: (line) => lines.push(line) });
    started.push(node);
    expect(
      lines.some((line) => line.includes(`Listening on 127.0.0.1:${new URL(node.rpcUrl).port}`)),
    ).toBe(true);
    expect(lines.some((line) => line.trim() === '196')).toBe(true); // the "Chain ID" banner section
  });

  it('writes the state file on stop, exits, and restores the chain from it', async () => {
    const stateFile = path.join(tempDir, 'state-196.json');
    const first = await startAnvil({ chainId: 196, stateFile });
    const holder = '0x1111111111111111111111111111111111111111';
    await createAnvilTestClient(first).setBalance({ address: holder, value: 12_345n });
    await createAnvilTestClient(first).mine({ blocks: 3 });
    await first.stop();

    expect(isAlive(first.pid)).toBe(false);
    expect(fs.statSync(stateFile).size).toBeGreaterThan(0);
    await first.stop(); // idempotent

    const second = await startAnvil({ chainId: 196, stateFile });
    started.push(second);
    const client = createChainPublicClient(second);
    expect(await client.getBalance({ address: holder })).toBe(12_345n);
    expect(await client.getBlockNumber()).toBe(3n);
  });

  it('fails with AnvilStartError naming the binary when ANVIL_BIN points nowhere', async () => {
    const previous = process.env.ANVIL_BIN;
    process.env.ANVIL_BIN = path.join(tempDir, 'no-such-anvil');
    try {
      await expect(startAnvil({ chainId: 196 })).rejects.toThrow(AnvilStartError);
      await expect(startAnvil({ chainId: 196 })).rejects.toThrow(/no-such-anvil/);
    } finally {
      if (previous === undefined) delete process.env.ANVIL_BIN;
      else process.env.ANVIL_BIN = previous;
    }
  });

  it('fails with AnvilStartError carrying anvil output when the port is taken', async () => {
    const holder = await startAnvil({ chainId: 196 });
    started.push(holder);
    const port = Number(new URL(holder.rpcUrl).port);
    const failure = await startAnvil({ chainId: 8453, port, startTimeoutMs: 5_000 }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(AnvilStartError);
    expect((failure as AnvilStartError).chainId).toBe(8453);
    expect((failure as AnvilStartError).message).toMatch(/Address already in use/);
  });

  it('with a state file and no stateIntervalS, dumps on stop only: no periodic dump of the growing chain', async () => {
    const stateFile = path.join(tempDir, 'state-on-stop.json');
    const node = await startAnvil({ chainId: 196, stateFile });
    started.push(node);
    // Linux: the arguments anvil runs with. A periodic dump writes every block and transaction.
    const args = fs.readFileSync(`/proc/${node.pid}/cmdline`, 'utf8').split('\0');
    expect(args).toContain('--state');
    expect(args[args.indexOf('--state') + 1]).toBe(stateFile);
    expect(args.some((arg) => arg.startsWith('--state-interval') || arg === '-s')).toBe(false);
  });

  it('dumps state every stateIntervalS, so a crash loses at most that interval', async () => {
    const stateFile = path.join(tempDir, 'state-crash.json');
    const crashed = await startAnvil({ chainId: 8453, stateFile, stateIntervalS: 1 });
    const holder = '0x2222222222222222222222222222222222222222';
    await createAnvilTestClient(crashed).setBalance({ address: holder, value: 777n });
    const deadlineMs = Date.now() + 5_000;
    // Wait for the first periodic dump that holds the change (about a second), not for a fixed time.
    const dumped = (): boolean =>
      fs.existsSync(stateFile) && fs.readFileSync(stateFile, 'utf8').includes(holder);
    while (!dumped() && Date.now() < deadlineMs)
      await new Promise((resolve) => setTimeout(resolve, 50));
    process.kill(crashed.pid, 'SIGKILL');
    await crashed.stop(); // returns once the killed child has been reaped

    const restarted = await startAnvil({ chainId: 8453, stateFile });
    started.push(restarted);
    expect(await createChainPublicClient(restarted).getBalance({ address: holder })).toBe(777n);
  });
});
