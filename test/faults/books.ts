// What every fault test checks once the fault is over: every pending job done (purchases ended,
// owner notices and webhook deliveries sent, no x402 payment left settling or parked), the books
// zero per asset with nothing in SUSPENSE, the ledger's treasury and fee receiver moved exactly as
// the chains did, the merchant paid once per completed purchase, and each payer charged on chain
// exactly what its answered payments (less refunds) say: no payment doubled, none unbooked.
import { parseAbi } from 'viem';
import { readTokenBalance } from '../../platform/chain/tokens';
import { accountId, assetId, FEE_RECEIVER_REF, FLOAT_REF } from '../../subgraphs/ledger';
import { trialBalanceLines } from '../support/x402Books';
import type { Agent, LoadRun } from './load';
import type { FaultWorld } from './world';

const AUTHORIZATION_USED = parseAbi([
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
]);
const ENDED = ['COMPLETED', 'REFUNDED'];

export interface Books {
  readonly settlementBlock: bigint;
  readonly chain: Record<string, bigint>;
  readonly ledger: Record<string, bigint>;
  readonly payers: Record<string, bigint>;
}

function assets(world: FaultWorld) {
  const { funding, settlement } = world.devnet.info.chains;
  return {
    F: assetId(funding.caip2, funding.token.address),
    S: assetId(settlement.caip2, settlement.token.address),
  };
}

async function ledgerBalance(world: FaultWorld, account: string): Promise<bigint> {
  const { rows } = await world.stack.db.pool.query<{ balance: string }>(
    'SELECT COALESCE(sum(amount), 0)::text AS balance FROM ledger.entries WHERE account_id = $1',
    [account],
  );
  return BigInt(rows[0]!.balance);
}

/** Chain and ledger balances of the treasury and fee receiver on both rails, and each payer's. */
export async function readBooks(world: FaultWorld, agents: readonly Agent[]): Promise<Books> {
  const { F, S } = assets(world);
  const { treasury, feeReceiver } = world.devnet.info.addresses;
  const fundingToken = world.rails.funding.token;
  const settlementToken = world.rails.settlement.token;
  const fc = world.fundingChain;
  const sc = world.settlementChain;
  const payers: Record<string, bigint> = {};
  for (const agent of agents)
    payers[agent.account.address] = await readTokenBalance(fc, fundingToken, agent.account.address);
  return {
    settlementBlock: await sc.getBlockNumber(),
    chain: {
      treasuryF: await readTokenBalance(fc, fundingToken, treasury),
      treasuryS: await readTokenBalance(sc, settlementToken, treasury),
      feeF: await readTokenBalance(fc, fundingToken, feeReceiver),
      feeS: await readTokenBalance(sc, settlementToken, feeReceiver),
    },
    ledger: {
      treasuryF: await ledgerBalance(world, accountId('TREASURY', F, FLOAT_REF)),
      treasuryS: await ledgerBalance(world, accountId('TREASURY', S, FLOAT_REF)),
      feeF: await ledgerBalance(world, accountId('TREASURY', F, FEE_RECEIVER_REF)),
      feeS: await ledgerBalance(world, accountId('TREASURY', S, FEE_RECEIVER_REF)),
    },
    payers,
  };
}

export interface PendingJobs {
  /** `intentId state` of each purchase not ended yet. */
  readonly purchasesNotEnded: string[];
  readonly noticesPending: number;
  readonly webhooksPending: number;
  readonly paymentsUnsettled: number;
}

export async function pendingJobs(world: FaultWorld, run: LoadRun): Promise<PendingJobs> {
  const db = world.stack.db.pool;
  const count = async (sql: string, params: unknown[] = []) =>
    Number((await db.query<{ n: string }>(sql, params)).rows[0]!.n);
  return {
    purchasesNotEnded: (
      await db.query<{ line: string }>(
        `SELECT intent_id || ' ' || state || COALESCE(' ' || state_reason, '') AS line
           FROM intent.consumer_intents WHERE intent_id = ANY($1) AND NOT state = ANY($2)`,
        [run.purchases, ENDED],
      )
    ).rows.map((row) => row.line),
    noticesPending: await count(
      "SELECT count(*) AS n FROM policy.channel_deliveries WHERE state = 'PENDING'",
    ),
    webhooksPending: await count(
      "SELECT count(*) AS n FROM policy.webhook_deliveries WHERE state = 'PENDING'",
    ),
    paymentsUnsettled: await count(
      "SELECT count(*) AS n FROM ledger.service_payments WHERE state IN ('SETTLING', 'PENDING')",
    ),
  };
}

/** Waits (reading, never sleeping blindly past it) until every pending job is done; returns what is left. */
export async function untilDrained(
  world: FaultWorld,
  run: LoadRun,
  timeoutMs = 90_000,
): Promise<PendingJobs> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = await pendingJobs(world, run);
    const done =
      left.purchasesNotEnded.length === 0 &&
      [left.noticesPending, left.webhooksPending, left.paymentsUnsettled].every((n) => n === 0);
    if (done || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The end state of every purchase of the run, by state. */
export async function purchaseEnds(
  world: FaultWorld,
  run: LoadRun,
): Promise<Array<{ intent_id: string; state: string; funding_amount: string | null }>> {
  const { rows } = await world.stack.db.pool.query(
    `SELECT intent_id, state, funding_amount::text AS funding_amount
       FROM intent.consumer_intents WHERE intent_id = ANY($1)`,
    [run.purchases],
  );
  return rows;
}

/** The checks every fault test ends with (see the file comment); `before` was read before the load. */
export async function expectBooksBalanced(
  world: FaultWorld,
  agents: readonly Agent[],
  run: LoadRun,
  before: Books,
): Promise<void> {
  for (const line of await trialBalanceLines(world.stack))
    expect(line).toMatchObject({ netAtomic: '0', balanced: true });
  const suspense = await world.stack.db.pool.query<{ n: string }>(
    `SELECT COALESCE(sum(amount), 0)::text AS n FROM ledger.entries WHERE account_id LIKE 'SUSPENSE:%'`,
  );
  expect(suspense.rows[0]!.n).toBe('0');

  const after = await readBooks(world, agents);
  for (const key of Object.keys(before.chain))
    expect({ [key]: after.ledger[key]! - before.ledger[key]! }).toEqual({
      [key]: after.chain[key]! - before.chain[key]!,
    });

  const ends = await purchaseEnds(world, run);
  expect(ends).toHaveLength(run.purchases.length);
  const completed = ends.filter((row) => row.state === 'COMPLETED').length;
  const merchantPayments = await world.settlementChain.getLogs({
    address: world.rails.settlement.token,
    event: AUTHORIZATION_USED[0],
    args: { authorizer: world.rails.settlement.treasury },
    fromBlock: before.settlementBlock + 1n,
    toBlock: 'latest',
  });
  expect(merchantPayments.length).toBe(completed);

  const refunded = new Map<string, bigint>();
  for (const row of ends.filter((end) => end.state === 'REFUNDED')) {
    const intent = await world.stack.db.pool.query<{ wallet: string }>(
      'SELECT wallet FROM intent.consumer_intents WHERE intent_id = $1',
      [row.intent_id],
    );
    const wallet = intent.rows[0]!.wallet.toLowerCase();
    refunded.set(wallet, (refunded.get(wallet) ?? 0n) + BigInt(row.funding_amount ?? '0'));
  }
  for (const agent of agents) {
    const address = agent.account.address;
    const answered = run.paid
      .filter((payment) => payment.payer === address)
      .reduce((sum, payment) => sum + payment.amount, 0n);
    const spent = before.payers[address]! - after.payers[address]!;
    expect({ payer: address, spent }).toEqual({
      payer: address,
      spent: answered - (refunded.get(address.toLowerCase()) ?? 0n),
    });
  }
}
