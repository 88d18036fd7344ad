// Which domains merchant a process buys from: the configured URL untouched, none without a devnet,
// and on the embedded devnet a local merchant that keeps its identity (payTo) across restarts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { type DevnetChains, startDevnetChains } from '../devnet/chains';
import { prepareProviders } from './providers';

describe('prepareProviders', () => {
  let dataDir: string;
  let devnet: DevnetChains;
  const lines: string[] = [];
  const out = (line: string) => lines.push(line);

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'providers-test-'));
    devnet = await startDevnetChains({ dataDir: null });
  });

  afterAll(async () => {
    await devnet?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  beforeEach(() => {
    lines.length = 0;
  });

  it('keeps a configured URL and starts nothing, even on the devnet', async () => {
    const providers = await prepareProviders({
      urls: { domains: 'https://domains.example' },
      devnetSettlement: devnet.info.chains.settlement,
      dataDir,
      out,
    });
    expect(providers.urls).toEqual({ domains: 'https://domains.example' });
    expect(fs.existsSync(path.join(dataDir, 'merchants'))).toBe(false);
    expect(lines).toEqual(['providers       domains.check https://domains.example']);
    await providers.stop();

    lines.length = 0;
    await prepareProviders({
      urls: { domains: 'https://buyer:secret-value@domains.example/v1' },
      devnetSettlement: null,
      dataDir,
      out,
    });
    expect(lines).toEqual(['providers       domains.check https://buyer:***@domains.example/v1']);
  });

  it('has none without a URL or a devnet', async () => {
    const providers = await prepareProviders({
      urls: { domains: null },
      devnetSettlement: null,
      dataDir,
      out,
    });
    expect(providers.urls).toEqual({ domains: null });
    expect(lines).toEqual(['providers       domains.check none (PROVIDER_DOMAINS_URL unset)']);
  });

  it('starts the devnet merchant, prints where it runs, and keeps its payTo across restarts', async () => {
    const payToOf = async (url: string) => {
      const response = await fetch(`${url}/domains/check?domain=example.test`);
      expect(response.status).toBe(402);
      return decodePaymentRequiredHeader(response.headers.get('payment-required')!).accepts[0]
        .payTo;
    };
    const first = await prepareProviders({
      urls: { domains: null },
      devnetSettlement: devnet.info.chains.settlement,
      dataDir,
      out,
    });
    const firstPayTo = await payToOf(first.urls.domains!);
    expect(lines).toEqual([
      `providers       domains.check ${first.urls.domains} (devnet merchant: 50000 atomic USDC on eip155:8453 to ${firstPayTo})`,
    ]);
    await first.stop();
    await expect(
      fetch(`${first.urls.domains}/domains/check?domain=example.test`),
    ).rejects.toThrow();

    const second = await prepareProviders({
      urls: { domains: null },
      devnetSettlement: devnet.info.chains.settlement,
      dataDir,
      out,
    });
    try {
      expect(await payToOf(second.urls.domains!)).toBe(firstPayTo);
    } finally {
      await second.stop();
    }
  });
});
