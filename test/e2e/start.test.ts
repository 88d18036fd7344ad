// `spend-control start` as a user runs it: the built CLI in its own process, with no DATABASE_URL
// and no RPC URLs, so it brings up embedded PostgreSQL and both anvil chains. Ctrl-C must leave
// no process behind, and a second start must find the data and chain state of the first.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createPublicClient, http, erc20Abi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { faucet } from '../../devnet/faucet';
import { CLI, cliEnv, freePort, startCli, type Started } from '../support/cliProcess';

const ANVIL_DEV_KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function childPids(dataDir: string): number[] {
  const devnet = JSON.parse(readFileSync(path.join(dataDir, 'devnet.json'), 'utf8')) as {
    pids: { funding: number; settlement: number };
  };
  const postmaster = Number(
    readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  return [devnet.pids.funding, devnet.pids.settlement, postmaster];
}

async function graphqlAt(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  token?: string,
) {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as { data?: any; errors?: unknown[] };
}

describe('spend-control start on embedded defaults', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'spend-control-start-'));
  // mkdtemp makes 0700; the embedded PostgreSQL runs as the postgres user and must reach its folder.
  chmodSync(dataDir, 0o755);
  let port: number;
  let running: Started | null = null;

  beforeAll(async () => {
    if (!existsSync(CLI))
      throw new Error(`${CLI} is missing: run "npm run build" (npm test builds first)`);
    port = await freePort();
  });

  afterAll(async () => {
    if (running && running.child.exitCode === null) {
      running.child.kill('SIGINT');
      await running.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts everything, serves GraphQL, REST and subscriptions, and stops cleanly on SIGINT', async () => {
    running = await startCli(cliEnv(dataDir, port));
    const url = `http://127.0.0.1:${port}`;
    // The service runs as the embedded service login, not the superuser, and the start-up check is content.
    expect(running.output()).toMatch(
      /database +postgres:\/\/spend_control_app:\*\*\*@127\.0\.0\.1:\d+\/spend_control/,
    );
    expect(running.output()).not.toContain('WARNING');
    expect(running.output()).toMatch(
      /chains +funding +eip155:196 http:\/\/127\.0\.0\.1:\d+ USDT0 0x[0-9a-fA-F]{40}/,
    );

    const joined = await graphqlAt(
      url,
      '{ capability(id: "domains.check") { effectiveMaturity builderTools { path } } }',
    );
    expect(joined.errors).toBeUndefined();
    expect(joined.data.capability.effectiveMaturity).toBe('VERIFIED');
    expect(joined.data.capability.builderTools.length).toBeGreaterThan(0);

    const catalog = (await (await fetch(`${url}/consumer/catalog`)).json()) as any;
    expect(catalog.execution.providersExecutableToday).toEqual(['spendctl-domains']);

    // The launch pack checks the devnet registry's TLDs by default; no LLM_* set: the fallback names.
    expect(running.output()).toMatch(/builder +names from the fallback generator/);
    const checked = (await (
      await fetch(`${url}/builder/check_domains`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ names: ['taken'] }),
      })
    ).json()) as any;
    expect(checked.results.map((result: any) => [result.domain, result.status])).toEqual([
      ['taken.test', 'TAKEN'],
      ['taken.example', 'AVAILABLE'],
    ]);

    const adminToken = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    const client = createClient({
      url: `ws://127.0.0.1:${port}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
    });
    try {
      const change = new Promise<unknown>((resolve, reject) => {
        client.subscribe<{ catalogChanged: unknown }>(
          { query: 'subscription { catalogChanged { kind id maturity } }' },
          {
            next: (message) => resolve(message.data?.catalogChanged),
            error: reject,
            complete: () => undefined,
          },
        );
      });
      // The subscription is live once the server has acknowledged it; give the socket a moment.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const promoted = await graphqlAt(
        url,
        'mutation { setProviderMaturity(id: "spendctl-gifts", maturity: SANDBOX, reason: "start e2e") { maturity } }',
        {},
        adminToken,
      );
      expect(promoted.errors).toBeUndefined();
      await expect(change).resolves.toEqual({
        kind: 'PROVIDER',
        id: 'spendctl-gifts',
        maturity: 'SANDBOX',
      });
    } finally {
      await client.dispose();
    }

    const pids = childPids(dataDir);
    expect(pids.every(alive)).toBe(true);
    running.child.kill('SIGINT');
    await expect(running.exited).resolves.toBe(0);
    expect(running.output()).toContain('stopped');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(pids.filter(alive)).toEqual([]);
  });

  it('reuses the data and the chain state on a second start', async () => {
    const before = JSON.parse(readFileSync(path.join(dataDir, 'devnet.json'), 'utf8')) as {
      chains: { funding: { token: { address: Address } } };
      addresses: { treasury: Address };
    };
    const adminTokenBefore = readFileSync(path.join(dataDir, 'admin-token'), 'utf8');
    running = await startCli(cliEnv(dataDir, port));
    const url = `http://127.0.0.1:${port}`;
    expect(running.output()).toContain('migrations      0 applied');
    const after = JSON.parse(
      readFileSync(path.join(dataDir, 'devnet.json'), 'utf8'),
    ) as typeof before & {
      chains: { funding: { rpcUrl: string } };
    };
    expect(after.chains.funding.token.address).toBe(before.chains.funding.token.address);
    expect(readFileSync(path.join(dataDir, 'admin-token'), 'utf8')).toBe(adminTokenBefore);

    const chain = createPublicClient({ transport: http(after.chains.funding.rpcUrl) });
    const float = await chain.readContract({
      address: after.chains.funding.token.address,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [after.addresses.treasury],
    });
    expect(float).toBeGreaterThan(0n);

    const gifts = await graphqlAt(url, '{ provider(id: "spendctl-gifts") { maturity } }');
    expect(gifts.data.provider.maturity).toBe('SANDBOX');

    // An agent with the official x402 client pays GET /ping_service on this devnet.
    const payer = privateKeyToAccount(generatePrivateKey());
    await faucet({ dataDir, address: payer.address, amount: '1.00' });
    const token = after.chains.funding.token.address;
    const feeReceiver = (after as unknown as { addresses: { feeReceiver: Address } }).addresses
      .feeReceiver;
    const balanceOf = (owner: Address) =>
      chain.readContract({
        address: token,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [owner],
      });
    const receiverBefore = await balanceOf(feeReceiver);
    const client = new x402Client().register('eip155:196', new ExactEvmScheme(payer));
    client.setSpendControls({ allowedAssets: [{ network: 'eip155:196', asset: token }] });
    const paid = await wrapFetchWithPayment(fetch, client)(`${url}/ping_service`);
    expect(paid.status).toBe(200);
    expect(await paid.json()).toMatchObject({ ok: true, tool: 'ping_service' });
    expect(decodePaymentResponseHeader(paid.headers.get('payment-response')!).success).toBe(true);
    expect(await balanceOf(payer.address)).toBe(1_000_000n - 10_000n);
    expect(await balanceOf(feeReceiver)).toBe(receiverBefore + 10_000n);
    const adminToken = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    const fees = await graphqlAt(
      url,
      '{ ledgerGroups(filter: { kind: SERVICE_FEE }) { nodes { memo entries { accountKey amountAtomic } } } }',
      {},
      adminToken,
    );
    expect(fees.errors).toBeUndefined();
    expect(
      fees.data.ledgerGroups.nodes.some((group: { memo: string }) =>
        group.memo.includes(payer.address.toLowerCase()),
      ),
    ).toBe(true);

    running.child.kill('SIGTERM');
    await expect(running.exited).resolves.toBe(0);
  });

  it('refuses to start with a published development key and names the variable, not the key', async () => {
    const child = spawn(process.execPath, [CLI, 'start'], {
      env: cliEnv(dataDir, port, { TREASURY_PRIVATE_KEY: ANVIL_DEV_KEY_0 }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('TREASURY_PRIVATE_KEY');
    expect(stderr).not.toContain(ANVIL_DEV_KEY_0.slice(2));
  });
});
