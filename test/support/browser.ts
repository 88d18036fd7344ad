// Headless Chromium for the dashboard's browser tests (playwright-core, no bundled browser):
// CHROMIUM_PATH when set, else the system's /usr/bin/chromium, else installed with apt-get when
// running as root (CI: Debian, root). Each page gets an injected EIP-1193 wallet backed by a viem
// account, so sign-in and EIP-712 approvals are real signatures.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Hex, LocalAccount, TypedDataDefinition } from 'viem';
import { aptProgram } from './aptPackages';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SYSTEM_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

export function chromiumPath(): string {
  return aptProgram({ packageName: 'chromium', paths: SYSTEM_PATHS, env: 'CHROMIUM_PATH' });
}

export interface TestBrowser {
  readonly browser: Browser;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  // launch() gives Chromium a fresh temporary profile (user-data-dir) of its own each run.
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: FLAGS,
  });
  return { browser, close: () => browser.close() };
}

const UINTS = new Set(['policyId', 'amount', 'deadline', 'nonce']);

/** What the injected wallet answers, as MetaMask would, signing with the viem account. */
async function walletRequest(
  account: LocalAccount,
  method: string,
  params: unknown[],
): Promise<unknown> {
  if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [account.address];
  if (method === 'personal_sign')
    return account.signMessage({ message: { raw: params[0] as Hex } });
  if (method === 'eth_signTypedData_v4') {
    const typed = JSON.parse(String(params[1])) as {
      domain: Record<string, unknown>;
      types: Record<string, { name: string; type: string }[]>;
      primaryType: string;
      message: Record<string, unknown>;
    };
    const { EIP712Domain: _domain, ...types } = typed.types;
    const message = Object.fromEntries(
      Object.entries(typed.message).map(([k, v]) => [k, UINTS.has(k) ? BigInt(String(v)) : v]),
    );
    return account.signTypedData({
      domain: typed.domain,
      types,
      primaryType: typed.primaryType,
      message,
    } as unknown as TypedDataDefinition);
  }
  throw new Error(`The test wallet does not support ${method}.`);
}

/** A browser context whose pages see window.ethereum backed by `account`. */
export async function walletContext(
  browser: Browser,
  account: LocalAccount,
): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  await context.exposeFunction('__testWallet', (method: string, params: unknown[]) =>
    walletRequest(account, method, params ?? []),
  );
  // A page script (not compiled here): window.ethereum forwards each request to the wallet above.
  await context.addInitScript({
    content: `window.ethereum = { isTestWallet: true,
      request: ({ method, params }) => window.__testWallet(method, params || []) };`,
  });
  return context;
}

/** Writes test-results/dashboard-<name>.png (ignored by git). */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = path.join(process.cwd(), 'test-results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `dashboard-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
