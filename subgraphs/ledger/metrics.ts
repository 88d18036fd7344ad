// The ledger's business series, read at scrape time (platform/sqlCollectors.ts): groups posted by
// kind follow ledger.groups by its unique seq (one index range read of the rows since last scrape).
import type { SqlCollectors } from '../../platform/sqlCollectors';

export const LEDGER_METRICS: SqlCollectors = {
  tails: [
    {
      name: 'spend_ledger_groups_total',
      help: 'Ledger groups posted, by kind',
      labels: ['kind'],
      startSql: 'SELECT max(seq)::text AS last FROM ledger.groups',
      sql: `SELECT kind::text AS kind, count(*) AS n, max(seq)::text AS last
              FROM ledger.groups WHERE seq > $1::bigint GROUP BY 1`,
    },
  ],
  gauges: [],
};
