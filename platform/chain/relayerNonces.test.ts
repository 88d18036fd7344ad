// The relayer nonces against a real anvil, through a JSON-RPC proxy that counts what is asked: the
// pending count is read once per account, every nonce after it is counted here, and every
// transaction sent under them is mined; a reset or a failed read goes back to the chain.
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { startRpcProxy, type RpcProxy } from '../../test/support/rpcProxy';
import { type AnvilNode, startAnvil } from './anvil';
import { createAnvilTestClient, createChainPublicClient, createChainWalletClient } from './clients';
import { createRelayerNonces } from './relayerNonces';

let anvil: AnvilNode;
let proxy: RpcProxy;

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 });
  proxy = await startRpcProxy(anvil.rpcUrl);
});

afterAll(async () => {
  await proxy.stop();
  await anvil.stop();
});

const SINK = '0x000000000000000000000000000000000000dEaD';
const countReads = () => proxy.calls.get('eth_getTransactionCount') ?? 0;

async function funded() {
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  await createAnvilTestClient(anvil).setBalance({ address, value: 10n ** 20n });
  return { key, address };
}

const endpoint = () => ({ chainId: anvil.chainId, rpcUrl: proxy.url });

it('reads the pending count once per account, then hands out consecutive nonces, all mined', async () => {
  const nonces = createRelayerNonces();
  const { key, address } = await funded();
  const plain = createChainWalletClient(endpoint(), privateKeyToAccount(key));
  // Two transactions the manager never saw: its first read must count them.
  for (const nonce of [0, 1]) await plain.sendTransaction({ to: SINK, nonce, gas: 21_000n });

  const account = privateKeyToAccount(key, { nonceManager: nonces });
  const wallet = createChainWalletClient(endpoint(), account, { pollingIntervalMs: 20 });
  const before = countReads();
  const hashes: Hex[] = [];
  for (const wave of [6, 6]) {
    const sent = await Promise.all(
      Array.from({ length: wave }, () => wallet.sendTransaction({ to: SINK, gas: 21_000n })),
    );
    hashes.push(...sent);
  }
  expect(countReads() - before).toBe(1);

  const chain = createChainPublicClient(endpoint(), { pollingIntervalMs: 20 });
  const receipts = await Promise.all(
    hashes.map((hash) => chain.waitForTransactionReceipt({ hash })),
  );
  expect(receipts.every((receipt) => receipt.status === 'success')).toBe(true);
  const used = await Promise.all(
    hashes.map(async (hash) => (await chain.getTransaction({ hash })).nonce),
  );
  expect([...used].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 2));
  expect(await chain.getTransactionCount({ address })).toBe(14);

  // Another account on the same manager is read on its own.
  const other = await funded();
  const client = createChainPublicClient(endpoint());
  const readsBefore = countReads();
  expect(await nonces.consume({ address: other.address, chainId: anvil.chainId, client })).toBe(0);
  expect(await nonces.consume({ address: other.address, chainId: anvil.chainId, client })).toBe(1);
  expect(countReads() - readsBefore).toBe(1);
});

it('after a reset the chain decides again: a nonce handed out but never sent is handed out again', async () => {
  const nonces = createRelayerNonces();
  const { address } = await funded();
  const client = createChainPublicClient(endpoint());
  const account = { address, chainId: anvil.chainId, client };
  expect(await nonces.consume(account)).toBe(0);
  expect(await nonces.consume(account)).toBe(1);
  expect(await nonces.get(account)).toBe(2);
  const before = countReads();
  nonces.reset(account);
  expect(await nonces.consume(account)).toBe(0);
  expect(countReads() - before).toBe(1);
});

it('a failed read hands out nothing and is not kept: the next nonce is read again', async () => {
  const nonces = createRelayerNonces();
  const { address } = await funded();
  const down = createChainPublicClient({ chainId: anvil.chainId, rpcUrl: 'http://127.0.0.1:1' });
  const failed = nonces.consume({ address, chainId: anvil.chainId, client: down });
  const behind = nonces.consume({ address, chainId: anvil.chainId, client: down });
  await expect(failed).rejects.toThrow();
  await expect(behind).rejects.toThrow();

  const client = createChainPublicClient(endpoint());
  const before = countReads();
  expect(await nonces.consume({ address, chainId: anvil.chainId, client })).toBe(0);
  expect(await nonces.consume({ address, chainId: anvil.chainId, client })).toBe(1);
  expect(countReads() - before).toBe(1);
});
