// Clients come from {chainId, rpcUrl} alone: viem's own X Layer and Base definitions with the RPC
// replaced (so real networks work unchanged), a plain EVM chain for any other id, and fast failure
// against an endpoint that is not there.
import net from 'node:net';
import { base, xLayer } from 'viem/chains';
import { caip2Of, chainFor, createChainPublicClient } from './clients';

async function closedLoopbackPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('chain clients', () => {
  it('reuses viem’s X Layer and Base definitions with only the RPC URL replaced', () => {
    const funding = chainFor({ chainId: 196, rpcUrl: 'http://127.0.0.1:1111' });
    const settlement = chainFor({ chainId: 8453, rpcUrl: 'http://127.0.0.1:2222' });
    expect(funding.rpcUrls.default.http).toEqual(['http://127.0.0.1:1111']);
    expect(settlement.rpcUrls.default.http).toEqual(['http://127.0.0.1:2222']);
    expect(funding.name).toBe(xLayer.name);
    expect(settlement.formatters).toBe(base.formatters); // OP-stack deposit transactions decode
    expect(xLayer.rpcUrls.default.http).not.toEqual(['http://127.0.0.1:1111']); // viem's object untouched
  });

  it('defines any other chain id as a plain EVM chain named by its CAIP-2 id', () => {
    const chain = chainFor({ chainId: 31337, rpcUrl: 'http://127.0.0.1:3333' });
    expect(chain.id).toBe(31337);
    expect(chain.name).toBe('eip155:31337');
    expect(caip2Of(196)).toBe('eip155:196');
  });

  it('fails quickly when nothing listens at the RPC URL', async () => {
    const port = await closedLoopbackPort();
    const client = createChainPublicClient(
      { chainId: 196, rpcUrl: `http://127.0.0.1:${port}` },
      { retryCount: 0, timeoutMs: 1_000 },
    );
    const startedMs = Date.now();
    await expect(client.getChainId()).rejects.toThrow(/HTTP request failed|fetch failed/);
    expect(Date.now() - startedMs).toBeLessThan(1_000);
  });
});
