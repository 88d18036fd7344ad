// The one configuration module's public surface: loadConfig (and the process's cached getConfig),
// the typed Config and its sections, the local secrets of development, and admin token checks.
// Each job lives in its own file in this folder; importers name only this index.
import { loadConfig } from './load';
import type { Config } from './sections';

export { loadConfig } from './load';
export { prepareLocalSecrets, type LocalSecrets } from './localSecrets';
export { adminTokenMatches, sha256 } from './adminTokens';
export {
  ConfigError,
  DEFAULT_SERVICE_DESCRIPTION,
  DEFAULT_SERVICE_NAME,
  DEFAULT_SUBSCRIPTION_LIMITS,
  GRAPHQL_LIMIT_DEFAULTS,
  LOG_LEVELS,
  MAX_BODY_LIMIT_BYTES,
  MAX_RATE_LIMIT_SETTING,
  MIN_SECRET_BYTES,
  SUBGRAPH_COUNT,
  type BucketSetting,
  type ChainConfig,
  type Config,
  type BuilderConfig,
  type EscalationConfig,
  type GraphQLSettings,
  type Hex,
  type LogLevel,
  type NodeEnv,
  type RateLimitConfig,
  type RdapConfig,
  type Secrets,
  type SubscriptionLimits,
  type TrustProxy,
} from './sections';

let cached: Config | null = null;

/** The process's configuration, read from process.env on first use. */
export function getConfig(): Config {
  cached ??= loadConfig(process.env);
  return cached;
}
