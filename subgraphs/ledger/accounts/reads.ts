// An account's balance as the ledger computes it (ledger.balance_of: the sum of its entries,
// + debit, - credit). For checks in code and tests; dashboards read balances through books/.
import type { Db } from '../../../platform/db';
import { run } from '../sql';

/** The balance of one account (+ debit, - credit), from its entries. */
export async function accountBalance(db: Db, account: string): Promise<bigint> {
  const row = await run<{ balance: string }>(db, {
    text: 'SELECT ledger.balance_of($1)::text AS balance',
    values: [account],
  });
  return BigInt(row.balance);
}
