// What bench:growth measures on: its asset and accounts, the stack it sends preflights to (the
// all-in-one gateway, in-process, on a database of its own with the asset and POLICIES policies),
// a ledger with no history for posting on empty tables, and the preflight clients' job for a stack.
import type { RunningStack } from '../cli/stack';
import { startAllInOne } from '../cli/stack';
import { TOKEN } from '../core/test-support/spend-fixtures';
import { accountId, assetId, registerAsset } from '../subgraphs/ledger';
import type { ClientJob, PolicyRef } from './preflightClients';
import { benchStackOptions, createPolicies } from './preflightStack';
import { createScratchDatabase } from './service';

export const POLICIES = 20;
/** The token of the preflights' policies (policyDocument's), so their asset is the one registered. */
export const ASSET = assetId('eip155:196', TOKEN);
export const TREASURY = accountId('TREASURY', ASSET, 'float');
/** An obligation account's id less its ref (1…1,000). */
export const OBLIGATION_PREFIX = accountId('USER_OBLIGATION', ASSET, '1').slice(0, -1);

export type Database = Awaited<ReturnType<typeof createScratchDatabase>>;
/** The preflight clients' job less the nonces of one window. */
export type PreflightJob = Omit<ClientJob, 'nonceStart'>;

export interface GrowthStack {
  readonly database: Database;
  readonly stack: RunningStack;
  readonly policies: PolicyRef[];
}

function registerBenchAsset(database: Database): Promise<unknown> {
  return registerAsset(database.pool, {
    chain: 'eip155:196',
    token: TOKEN,
    symbol: 'USDT0',
    decimals: 6,
  });
}

/** A ledger with no history but the bench's asset, in a database of its own. */
export async function emptyLedger(connections: number): Promise<Database> {
  const database = await createScratchDatabase({ subgraphs: ['ledger'], poolSize: connections });
  await registerBenchAsset(database);
  return database;
}

/** A stack on a database of its own with no history: the asset and POLICIES policies. */
export async function startStack(secrets: {
  actorSecret: Buffer;
  adminToken: string;
}): Promise<GrowthStack> {
  const database = await createScratchDatabase({ poolSize: 20 });
  try {
    const stack = await startAllInOne(
      benchStackOptions(database.url, secrets, {
        transport: 'in-process',
        decisionThread: false,
        db: database.pool,
      }),
    );
    try {
      await registerBenchAsset(database);
      const policies = await createPolicies(stack.gateway.url, secrets.adminToken, POLICIES);
      return { database, stack, policies };
    } catch (error) {
      await stack.stop();
      throw error;
    }
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** The preflight clients' job against one stack: `seconds` per window, the persisted document. */
export function jobOf(
  started: GrowthStack,
  job: { seconds: number; actorSecret: Buffer; document: string },
): PreflightJob {
  return {
    target: 'gateway',
    url: `${started.stack.gateway.url}/preflight_payment`,
    policies: started.policies,
    seconds: job.seconds,
    actorSecretHex: job.actorSecret.toString('hex'),
    document: job.document,
  };
}
