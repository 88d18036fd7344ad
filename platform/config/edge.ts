// What the edge lets in: the rate-limit buckets, which proxies' X-Forwarded-For to trust, and
// what websocket subscriptions may hold. Each number has a bound so a typo cannot disable a limit.
import { isIP } from 'node:net';
import { show } from './envValues';
import type { EnvReader } from './envReader';
import {
  DEFAULT_SUBSCRIPTION_LIMITS,
  MAX_RATE_LIMIT_SETTING,
  type BucketSetting,
  type RateLimitConfig,
  type SubscriptionLimits,
  type TrustProxy,
} from './sections';

export function readRateLimits(read: EnvReader): RateLimitConfig {
  const bucket = (prefix: string, perMinute: number, burst: number): BucketSetting => ({
    perMinute: read.integer(`${prefix}_PER_MINUTE`, perMinute, 1, MAX_RATE_LIMIT_SETTING),
    burst: read.integer(`${prefix}_BURST`, burst, 1, MAX_RATE_LIMIT_SETTING),
  });
  return {
    store: read.oneOf('RATE_LIMIT_STORE', ['postgres', 'memory'], 'postgres'),
    ip: bucket('RATE_LIMIT_IP', 600, 120),
    challenge: bucket('RATE_LIMIT_CHALLENGE', 600, 60),
    principal: bucket('RATE_LIMIT_PRINCIPAL', 600, 120),
    payer: bucket('RATE_LIMIT_PAYER', 600, 60),
    paidIp: bucket('RATE_LIMIT_PAID_IP', 6_000, 600),
    signIn: bucket('RATE_LIMIT_SIGN_IN', 10, 10),
    outbound: bucket('RATE_LIMIT_OUTBOUND', 10, 5),
  };
}

const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
const MAX_PROXY_HOPS = 10;

/** An address, `address/prefix`, or a range name Express knows. */
function isProxyEntry(entry: string): boolean {
  if (PROXY_RANGE_NAMES.includes(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address!);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

export function readTrustProxy(read: EnvReader): TrustProxy {
  const value = read.raw('TRUST_PROXY');
  if (value === undefined) return false;
  if (/^[0-9]+$/.test(value)) return read.integer('TRUST_PROXY', 0, 1, MAX_PROXY_HOPS);
  const entries = read.list('TRUST_PROXY');
  const wrong = entries.filter((entry) => !isProxyEntry(entry));
  if (wrong.length > 0) {
    // `true` would trust any X-Forwarded-For, so every client could pick its own address.
    read.problem(
      'TRUST_PROXY',
      `${wrong.map(show).join(', ')}: name the proxies (addresses, subnets, loopback, linklocal, uniquelocal) or a hop count 1..${MAX_PROXY_HOPS}`,
    );
    return false;
  }
  return entries;
}

export function readSubscriptionLimits(read: EnvReader): SubscriptionLimits {
  const defaults = DEFAULT_SUBSCRIPTION_LIMITS;
  return {
    maxSocketsPerSession: read.integer(
      'SUBSCRIPTION_MAX_SOCKETS_PER_SESSION',
      defaults.maxSocketsPerSession,
      1,
      1000,
    ),
    maxSubscriptionsPerSocket: read.integer(
      'SUBSCRIPTION_MAX_PER_SOCKET',
      defaults.maxSubscriptionsPerSocket,
      1,
      1000,
    ),
    maxBufferedBytes: read.integer(
      'SUBSCRIPTION_MAX_BUFFERED_BYTES',
      defaults.maxBufferedBytes,
      16 * 1024,
      64 * 1024 * 1024,
    ),
    readConcurrency: read.integer('SUBSCRIPTION_READ_CONCURRENCY', defaults.readConcurrency, 1, 32),
    readQueueLength: read.integer('SUBSCRIPTION_READ_QUEUE', defaults.readQueueLength, 1, 100_000),
  };
}
