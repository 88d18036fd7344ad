// The RDAP settings a process uses: RDAP_BOOTSTRAP_URL (IANA's file by default off the devnet), or
// on `npm start`'s embedded default the devnet RDAP registry on 127.0.0.1, whose bootstrap points
// the devnet TLDs at itself. Prints where lookups go; stops the registry with the rest.
import type { RdapConfig } from '../platform/config';
import type { RdapClientOptions } from '../platform/rdap';
import { startDevnetRdapRegistry } from '../devnet/rdap/registry';

export interface RdapSetup {
  /** What createRdapClient needs; null when no bootstrap is known (a devnet role without the registry). */
  readonly client: RdapClientOptions | null;
  stop(): Promise<void>;
}

export async function prepareRdap(options: {
  config: RdapConfig;
  /** Start the devnet registry when no bootstrap is configured (the embedded devnet, role all). */
  standIn: boolean;
  out: (line: string) => void;
}): Promise<RdapSetup> {
  const { config, out } = options;
  const limits = {
    lookupTimeoutMs: config.lookupTimeoutMs,
    maxConcurrentLookups: config.maxConcurrentLookups,
    transportRetries: config.transportRetries,
  };
  if (config.bootstrapSource !== null) {
    out(`rdap            bootstrap ${config.bootstrapSource}`);
    return {
      client: {
        bootstrapSource: config.bootstrapSource,
        addressPolicy: config.addressPolicy,
        ...limits,
      },
      stop: async () => undefined,
    };
  }
  if (!options.standIn) {
    out(
      'rdap            none: set RDAP_BOOTSTRAP_URL (the devnet registry runs with --role all); domain checks answer UNKNOWN',
    );
    return { client: null, stop: async () => undefined };
  }
  const registry = await startDevnetRdapRegistry();
  out(
    `rdap            devnet registry ${registry.bootstrapUrl} (registered: ${registry.registeredNames.join(', ')})`,
  );
  return {
    // The devnet registry answers on loopback http.
    client: { bootstrapSource: registry.bootstrapUrl, addressPolicy: 'development', ...limits },
    stop: () => registry.stop(),
  };
}
