// Keeps key material out of logs: a sealed Config is deeply frozen, and its toJSON and inspect
// (and those of its secrets) print markers instead of secrets, keys and URL credentials.
import { inspect } from 'node:util';
import type { Config, ConfigFields } from './sections';

const REDACTED = '[redacted]';

/** Hides the password of a URL, and for RPC URLs also the path and query, where providers put API keys. */
function redactUrl(url: string | null, keepPath: boolean): string | null {
  if (url === null) return null;
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = REDACTED;
    if (!keepPath && (parsed.pathname !== '/' || parsed.search !== '')) {
      parsed.pathname = `/${REDACTED}`;
      parsed.search = '';
    }
    return parsed.toString();
  } catch {
    return REDACTED;
  }
}

function redactedView(config: ConfigFields): Record<string, unknown> {
  const secret = (value: unknown): string | null => (value === null ? null : REDACTED);
  const { secrets } = config;
  return {
    ...config,
    databaseUrl: redactUrl(config.databaseUrl, true),
    migrationDatabaseUrl: redactUrl(config.migrationDatabaseUrl, true),
    databaseListenUrl: redactUrl(config.databaseListenUrl, true),
    funding: { ...config.funding, rpcUrl: redactUrl(config.funding.rpcUrl, false) },
    settlement: { ...config.settlement, rpcUrl: redactUrl(config.settlement.rpcUrl, false) },
    escalations: {
      ...config.escalations,
      telegram: config.escalations.telegram && {
        ...config.escalations.telegram,
        botToken: REDACTED,
        webhookSecret: REDACTED,
      },
      slack: config.escalations.slack && {
        ...config.escalations.slack,
        botToken: REDACTED,
        signingSecret: REDACTED,
      },
      smtp: config.escalations.smtp && {
        ...config.escalations.smtp,
        url: redactUrl(config.escalations.smtp.url, true),
      },
    },
    providerUrls: { domains: redactUrl(config.providerUrls.domains, true) },
    builder: {
      ...config.builder,
      llm: config.builder.llm && {
        ...config.builder.llm,
        apiKey: REDACTED,
        baseUrl: redactUrl(config.builder.llm.baseUrl, true),
      },
    },
    secrets: {
      treasuryPrivateKey: secret(secrets.treasuryPrivateKey),
      relayerPrivateKey: secret(secrets.relayerPrivateKey),
      anchorWriterPrivateKey: secret(secrets.anchorWriterPrivateKey),
      adminTokenHashes: `[${secrets.adminTokenHashes.length} redacted]`,
      sessionSecret: secret(secrets.sessionSecret),
      internalActorSecret: secret(secrets.internalActorSecret),
      devKeyDenylist: `[${secrets.devKeyDenylist.length} redacted]`,
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (
    value === null ||
    typeof value !== 'object' ||
    Buffer.isBuffer(value) ||
    Object.isFrozen(value)
  )
    return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}

/**
 * Freezes the fields and gives the object (and its `secrets`) a toJSON and an inspect that redact,
 * so `JSON.stringify(config)`, pino and console.log never print key material.
 */
export function sealConfig(fields: ConfigFields): Config {
  const redactSecrets = () => redactedView(fields).secrets;
  Object.defineProperties(fields.secrets, {
    toJSON: { value: redactSecrets },
    [inspect.custom]: {
      value: (_depth: number, options: object) => inspect(redactSecrets(), options),
    },
  });
  Object.defineProperties(fields, {
    toJSON: { value: () => redactedView(fields) },
    [inspect.custom]: {
      value: (_depth: number, options: object) => inspect(redactedView(fields), options),
    },
  });
  return deepFreeze(fields as Config);
}
