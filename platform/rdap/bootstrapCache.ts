// Holds the RFC 9224 bootstrap file for one client: loaded from an https URL (loopback http for the
// devnet) or a local file, kept until its HTTP expiry (see bootstrapTtlMs), loaded once however many
// lookups ask at the same time. After a failed reload the last good copy serves a bounded while longer.
import { readFile, stat } from 'node:fs/promises';
import { basename, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  bootstrapTtlMs,
  BootstrapFormatError,
  type DnsBootstrap,
  parseDnsBootstrap,
} from './bootstrap';
import { isTimeout, networkCode, readBoundedText } from './http';
import {
  BOOTSTRAP_FETCH_TIMEOUT_MS,
  BOOTSTRAP_RETRY_AFTER_FAILURE_MS,
  DEFAULT_BOOTSTRAP_TTL_MS,
  MAX_BOOTSTRAP_BYTES,
  MAX_BOOTSTRAP_TTL_MS,
} from './limits';
import { isAllowedRdapUrl } from './urlPolicy';

export class BootstrapUnavailableError extends Error {
  constructor(
    readonly source: string,
    reason: string,
  ) {
    super(`the RDAP bootstrap from ${source} is unavailable: ${reason}`);
    this.name = 'BootstrapUnavailableError';
  }
}

type Location =
  { readonly kind: 'url'; readonly url: URL } | { readonly kind: 'file'; readonly path: string };

interface Copy {
  readonly bootstrap: DnsBootstrap;
  readonly expiresAtMs: number;
}

export class BootstrapCache {
  /**
   * The source as answers name it (`source` of an UNKNOWN with no registry): the URL, or for a file
   * only `file:<name>`, since answers end up in public receipts and a server's paths are not theirs.
   */
  readonly source: string;
  private readonly location: Location;
  private readonly now: () => Date;
  private copy: Copy | null = null;
  private loading: Promise<DnsBootstrap> | null = null;
  private retryAtMs = 0;
  private lastFailure = '';

  /** `source`: an https URL, an http URL on loopback, a file: URL or an absolute file path. */
  constructor(source: string, now: () => Date = () => new Date()) {
    this.location = locate(source);
    this.source =
      this.location.kind === 'url'
        ? this.location.url.href
        : `file:${basename(this.location.path)}`;
    this.now = now;
  }

  /** A fresh copy, loading it when needed. Throws BootstrapUnavailableError when none is usable. */
  async current(): Promise<DnsBootstrap> {
    const nowMs = this.now().getTime();
    if (this.copy !== null && nowMs < this.copy.expiresAtMs) return this.copy.bootstrap;
    if (nowMs < this.retryAtMs) return this.staleOrThrow(nowMs);
    this.loading ??= this.load().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async load(): Promise<DnsBootstrap> {
    try {
      const { json, ttlMs } = await (this.location.kind === 'url'
        ? fetchJson(this.location.url, this.now)
        : readJson(this.location.path));
      const bootstrap = parseDnsBootstrap(json);
      this.copy = { bootstrap, expiresAtMs: this.now().getTime() + ttlMs };
      return bootstrap;
    } catch (error) {
      const nowMs = this.now().getTime();
      this.retryAtMs = nowMs + BOOTSTRAP_RETRY_AFTER_FAILURE_MS;
      this.lastFailure = describe(error);
      return this.staleOrThrow(nowMs);
    }
  }

  private staleOrThrow(nowMs: number): DnsBootstrap {
    if (this.copy !== null && nowMs < this.copy.expiresAtMs + MAX_BOOTSTRAP_TTL_MS)
      return this.copy.bootstrap;
    throw new BootstrapUnavailableError(this.source, this.lastFailure);
  }
}

function locate(source: string): Location {
  if (isAbsolute(source)) return { kind: 'file', path: source };
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    throw new RangeError(
      'the RDAP bootstrap source must be an https URL, a loopback http URL, a file: URL or an absolute path',
    );
  }
  if (url.protocol === 'file:') return { kind: 'file', path: fileURLToPath(url) };
  if (!isAllowedRdapUrl(url))
    throw new RangeError('the RDAP bootstrap URL must use https (plain http only on loopback)');
  return { kind: 'url', url };
}

async function fetchJson(url: URL, now: () => Date): Promise<{ json: unknown; ttlMs: number }> {
  const signal = AbortSignal.timeout(BOOTSTRAP_FETCH_TIMEOUT_MS);
  const response = await fetch(url, {
    headers: { accept: 'application/json' },
    redirect: 'manual',
    signal,
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status}`);
  }
  const text = await readBoundedText(response, MAX_BOOTSTRAP_BYTES);
  return { json: parseJsonText(text), ttlMs: bootstrapTtlMs(response.headers, now()) };
}

async function readJson(path: string): Promise<{ json: unknown; ttlMs: number }> {
  if ((await stat(path)).size > MAX_BOOTSTRAP_BYTES)
    throw new Error(`the file is larger than ${MAX_BOOTSTRAP_BYTES} bytes`);
  return { json: parseJsonText(await readFile(path, 'utf8')), ttlMs: DEFAULT_BOOTSTRAP_TTL_MS };
}

function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new BootstrapFormatError('not valid JSON');
  }
}

function describe(error: unknown): string {
  if (isTimeout(error)) return `no answer within ${BOOTSTRAP_FETCH_TIMEOUT_MS} ms`;
  // By name: undici's TypeError may come from another realm (Jest's sandbox), failing instanceof.
  if ((error as Error | null)?.name === 'TypeError')
    return `could not connect (${networkCode(error)})`;
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === 'string') return `could not read the file (${code})`;
  return error instanceof Error ? error.message : 'unknown failure';
}
