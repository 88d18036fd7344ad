// What production demands beyond a valid value: every variable that the development defaults
// stand in for, consumer auth on, and a migration login other than the service's.
import type { EnvReader } from './envReader';
import type { ConfigFields } from './sections';

export function checkProduction(
  read: EnvReader,
  values: Pick<
    ConfigFields,
    | 'databaseUrl'
    | 'migrationDatabaseUrl'
    | 'funding'
    | 'settlement'
    | 'feeReceiverAddress'
    | 'secrets'
  > & {
    consumerAuthRequired: boolean;
  },
): void {
  const required: Array<[string, unknown]> = [
    // Sign-in messages name the service's domain and every card and docs link is built from it.
    ['PUBLIC_URL', read.raw('PUBLIC_URL') ?? null],
    ['DATABASE_URL', values.databaseUrl],
    ['FUNDING_RPC_URL', values.funding.rpcUrl],
    ['SETTLEMENT_RPC_URL', values.settlement.rpcUrl],
    ['FUNDING_TOKEN_ADDRESS', values.funding.tokenAddress],
    ['SETTLEMENT_TOKEN_ADDRESS', values.settlement.tokenAddress],
    ['TREASURY_PRIVATE_KEY', values.secrets.treasuryPrivateKey],
    ['RELAYER_PRIVATE_KEY', values.secrets.relayerPrivateKey],
    ['FEE_RECEIVER_ADDRESS', values.feeReceiverAddress],
    ['ADMIN_TOKEN_HASHES', values.secrets.adminTokenHashes.length > 0 ? true : null],
    ['SESSION_SECRET', values.secrets.sessionSecret],
    ['INTERNAL_ACTOR_SECRET', values.secrets.internalActorSecret],
  ];
  // One problem per variable: a set-but-invalid value, or a token address already reported as
  // missing beside its RPC URL, is not reported again.
  const reported = new Set(read.problems.map((problem) => problem.slice(0, problem.indexOf(':'))));
  for (const [name, value] of required) {
    if (value === null && read.raw(name) === undefined && !reported.has(name)) {
      read.problem(
        name,
        'is required when NODE_ENV=production (no devnet or embedded defaults there)',
      );
    }
  }
  if (!values.consumerAuthRequired) {
    read.problem('CONSUMER_AUTH_REQUIRED', 'cannot be turned off when NODE_ENV=production');
  }
  if (
    values.databaseUrl !== null &&
    values.migrationDatabaseUrl !== null &&
    loginOf(values.databaseUrl) === loginOf(values.migrationDatabaseUrl)
  ) {
    read.problem(
      'MIGRATION_DATABASE_URL',
      'logs in as the same role as DATABASE_URL; the service must run as a role that owns nothing',
    );
  }
}

function loginOf(url: string): string {
  return decodeURIComponent(new URL(url).username);
}
