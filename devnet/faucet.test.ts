// The devnet faucet: exact amount parsing, tokens and gas credited on both chains to any address,
// and clear refusals for bad input and for a devnet that is not running.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createChainPublicClient } from '../platform/chain/clients';
import { readTokenBalance } from '../platform/chain/tokens';
import { type DevnetChains, readDevnetFile, startDevnetChains } from './chains';
import { FaucetRefusedError, faucet, parseDisplayAmount } from './faucet';

describe('parseDisplayAmount', () => {
  it.each([
    ['100.5', 100_500_000n],
    ['100', 100_000_000n],
    ['100.00', 100_000_000n],
    ['0.000001', 1n],
    ['0', 0n],
    ['123456789012345678901234567890', 123456789012345678901234567890_000000n],
  ])('parses %s exactly', (text, expected) => {
    expect(parseDisplayAmount(text, 6)).toBe(expected);
  });

  it.each([
    '1e5',
    '-1',
    '+1',
    '1.0000001',
    '',
    '.5',
    '5.',
    ' 1',
    '1 ',
    '1,000',
    '0x10',
    'NaN',
    '1.2.3',
    '1'.repeat(65),
  ])('rejects %j', (text) => {
    expect(() => parseDisplayAmount(text, 6)).toThrow(RangeError);
  });
});

describe('faucet', () => {
  let dataDir: string;
  let devnet: DevnetChains | null = null;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devnet-faucet-test-'));
    devnet = await startDevnetChains({ dataDir });
  });

  afterAll(async () => {
    await devnet?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const refusal = async (promise: Promise<unknown>): Promise<FaucetRefusedError> => {
    const error = await promise.then(
      () => null,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(FaucetRefusedError);
    return error as FaucetRefusedError;
  };

  it('credits USDT0, USDC and gas to a fresh address on both chains', async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    const result = await faucet({ dataDir, address, amount: '250.5' });

    expect(result.address).toBe(address);
    expect(result.funding.amountAtomic).toBe(250_500_000n);
    expect(result.settlement.amountAtomic).toBe(250_500_000n);
    expect(result.funding.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    for (const role of ['funding', 'settlement'] as const) {
      const chain = devnet!.info.chains[role];
      const publicClient = createChainPublicClient(chain);
      expect(await readTokenBalance(publicClient, chain.token.address, address)).toBe(250_500_000n);
      expect(await publicClient.getBalance({ address })).toBe(result.gasWei);
      expect((await publicClient.getTransactionReceipt({ hash: result[role].txHash })).status).toBe(
        'success',
      );
    }
  });

  it('adds to what an address already has, 100.00 by default', async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    await faucet({ dataDir, address });
    const second = await faucet({ dataDir, address: address.toLowerCase() });
    expect(second.funding.amountAtomic).toBe(100_000_000n);
    const chain = devnet!.info.chains.funding;
    const publicClient = createChainPublicClient(chain);
    expect(await readTokenBalance(publicClient, chain.token.address, address)).toBe(200_000_000n);
    expect(await publicClient.getBalance({ address })).toBe(2n * second.gasWei);
  });

  it('refuses an invalid address, a bad checksum and the zero address', async () => {
    const valid = privateKeyToAccount(generatePrivateKey()).address;
    const letterAt = valid.slice(2).search(/[a-fA-F]/) + 2;
    const flipped =
      valid[letterAt] === valid[letterAt].toLowerCase()
        ? valid[letterAt].toUpperCase()
        : valid[letterAt].toLowerCase();
    const badChecksum = `${valid.slice(0, letterAt)}${flipped}${valid.slice(letterAt + 1)}`;
    for (const address of [
      '0x1234',
      'not-an-address',
      badChecksum,
      '0x0000000000000000000000000000000000000000',
    ]) {
      expect((await refusal(faucet({ dataDir, address }))).reason).toBe('INVALID_ADDRESS');
    }
  });

  it('refuses amounts that are not exact positive decimals within the limit', async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    for (const amount of ['1e3', '-5', '0', '0.0000001', '1000000.000001']) {
      expect((await refusal(faucet({ dataDir, address, amount }))).reason).toBe('INVALID_AMOUNT');
    }
  });

  it('is refused when the devnet is stopped, crashed, or was never started', async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address;
    await devnet!.stop();
    devnet = null;
    const stopped = await refusal(faucet({ dataDir, address }));
    expect(stopped.reason).toBe('DEVNET_NOT_RUNNING');
    expect(stopped.message).toMatch(/was stopped at/);

    // A crash leaves devnet.json claiming to run: the dead RPC URL is what refuses it.
    const recorded = readDevnetFile(dataDir);
    fs.writeFileSync(
      path.join(dataDir, 'devnet.json'),
      JSON.stringify({ ...recorded, stoppedAt: null }),
    );
    const crashed = await refusal(faucet({ dataDir, address }));
    expect(crashed.reason).toBe('DEVNET_NOT_RUNNING');
    expect(crashed.message).toContain(recorded.chains.funding.rpcUrl);

    const emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'devnet-faucet-empty-'));
    try {
      const never = await refusal(faucet({ dataDir: emptyDir, address }));
      expect(never.reason).toBe('DEVNET_NOT_RUNNING');
      expect(never.message).toMatch(/never started/);
    } finally {
      fs.rmSync(emptyDir, { recursive: true, force: true });
    }
  });
});
