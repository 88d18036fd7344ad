// The relayer's sends through the facilitator signer, against a real anvil: concurrent settlements
// never share a nonce (a plain account without the nonce manager fails this: "nonce too low"), and
// a send the node refuses leaves no gap behind which every later settlement would wait. The RPC
// passes through a real HTTP relay on 127.0.0.1 that can refuse one eth_sendRawTransaction (and
// counts eth_getCode: within one settlement an address's code is read once).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type AnvilNode, startAnvil } from './anvil';
import { createAnvilTestClient, createChainWalletClient } from './clients';
import { createFacilitatorSigner, relayerAccount, withChainReads } from './facilitatorSigner';

let anvil: AnvilNode;
let relay: http.Server;
let relayUrl: string;
let refuseNextSend = false;
/** eth_getCode requests the relay forwarded. */
let codeReads = 0;

/** Forwards JSON-RPC to anvil; refuses one eth_sendRawTransaction when asked, as a flaky node would. */
function startRelay(target: string): Promise<http.Server> {
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const call = JSON.parse(body) as { id: number; method: string };
      response.setHeader('content-type', 'application/json');
      if (call.method === 'eth_getCode') codeReads += 1;
      if (refuseNextSend && call.method === 'eth_sendRawTransaction') {
        refuseNextSend = false;
        response.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: call.id,
            error: { code: -32003, message: 'transaction rejected by the relay' },
          }),
        );
        return;
      }
      const answer = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      response.end(await answer.text());
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function fundedSigner(
  codeReadsOf?: () => Map<string, Promise<Hex | undefined>> | undefined,
  knownContracts?: readonly Address[],
) {
  const account = relayerAccount(generatePrivateKey());
  await createAnvilTestClient(anvil).setBalance({ address: account.address, value: 10n ** 20n });
  const endpoint = { chainId: anvil.chainId, rpcUrl: relayUrl };
  const wallet = withChainReads(
    createChainWalletClient(endpoint, account, { pollingIntervalMs: 20 }),
  );
  const signer = createFacilitatorSigner(wallet, account.address, {
    confirmationTimeoutMs: 5_000,
    codeReads: codeReadsOf,
    knownContracts,
  });
  return { account, wallet, signer };
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 8453 });
  relay = await startRelay(anvil.rpcUrl);
  relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => relay.close(resolve));
  await anvil.stop();
});

const SINK = '0x000000000000000000000000000000000000dEaD';

it('sends 16 concurrent settlements with 16 consecutive nonces, all mined', async () => {
  const { account, wallet, signer } = await fundedSigner();
  const hashes = await Promise.all(
    Array.from({ length: 16 }, () => signer.sendTransaction({ to: SINK, data: '0x' })),
  );
  const receipts = await Promise.all(
    hashes.map((hash) => signer.waitForTransactionReceipt({ hash })),
  );
  expect(receipts.every((receipt) => receipt.status === 'success')).toBe(true);
  const nonces = await Promise.all(
    hashes.map(async (hash) => (await wallet.getTransaction({ hash })).nonce),
  );
  expect([...nonces].sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i));
  expect(await wallet.getTransactionCount({ address: account.address })).toBe(16);
});

it('after a send the RPC refused, the next settlement takes the free nonce and is mined', async () => {
  const { account, wallet, signer } = await fundedSigner();
  const first = await signer.sendTransaction({ to: SINK, data: '0x' });
  await signer.waitForTransactionReceipt({ hash: first });

  refuseNextSend = true;
  await expect(signer.sendTransaction({ to: SINK, data: '0x' })).rejects.toThrow(
    /rejected by the relay/,
  );
  expect(refuseNextSend).toBe(false);

  const next = await signer.sendTransaction({ to: SINK, data: '0x' });
  const receipt = await signer.waitForTransactionReceipt({ hash: next });
  expect(receipt.status).toBe('success');
  expect((await wallet.getTransaction({ hash: next })).nonce).toBe(1);
  expect(await wallet.getTransactionCount({ address: account.address })).toBe(2);
});

it("reads an address's code from the chain once within a settlement, every time outside one", async () => {
  let scope: Map<string, Promise<Hex | undefined>> | undefined;
  const { account, signer } = await fundedSigner(() => scope);
  codeReads = 0;
  await signer.getCode({ address: SINK });
  await signer.getCode({ address: SINK });
  expect(codeReads).toBe(2);

  scope = new Map();
  const [first, second] = await Promise.all([
    signer.getCode({ address: SINK }),
    signer.getCode({ address: SINK }),
  ]);
  await signer.getCode({ address: account.address });
  expect(codeReads).toBe(4); // SINK once, the relayer once
  expect(second).toEqual(first);

  scope = new Map(); // the next settlement asks the chain again
  await signer.getCode({ address: SINK });
  expect(codeReads).toBe(5);
});

it("keeps a known contract's code once read (the token: the facilitator's asset check then needs no chain), and only that", async () => {
  const token = privateKeyToAccount(generatePrivateKey()).address;
  const empty = privateKeyToAccount(generatePrivateKey()).address;
  const { signer } = await fundedSigner(undefined, [token, empty]);
  codeReads = 0;
  expect(await signer.getCode({ address: token })).toBeUndefined(); // no code yet: not kept
  await createAnvilTestClient(anvil).setCode({ address: token, bytecode: '0x6001600055' });
  expect(await signer.getCode({ address: token })).toBe('0x6001600055');
  expect(codeReads).toBe(2);
  expect(await signer.getCode({ address: token })).toBe('0x6001600055');
  expect(await signer.getCode({ address: token.toLowerCase() as Address })).toBe('0x6001600055');
  expect(codeReads).toBe(2); // kept: the chain is not asked again
  await signer.getCode({ address: empty });
  await signer.getCode({ address: empty });
  await signer.getCode({ address: SINK });
  expect(codeReads).toBe(5); // an empty account and an address not named are read every time
});
