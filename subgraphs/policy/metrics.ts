// The policy schema's business series, read at scrape time (platform/sqlCollectors.ts): pending
// escalations by age band, and the workers' lag (how long the oldest due delivery has waited past
// its time), each a bounded aggregate over a partial index (escalations_due, *_deliveries_due).
import type { SqlCollectors } from '../../platform/sqlCollectors';

export const POLICY_METRICS: SqlCollectors = {
  tails: [],
  gauges: [
    {
      name: 'spend_escalations_pending',
      help: 'Pending escalations by age band since they were raised',
      labels: ['age'],
      zeroes: [{ age: 'under_5m' }, { age: '5m_to_1h' }, { age: 'over_1h' }],
      sql: `SELECT CASE WHEN created_at > now() - interval '5 minutes' THEN 'under_5m'
                        WHEN created_at > now() - interval '1 hour' THEN '5m_to_1h'
                        ELSE 'over_1h' END AS age, count(*) AS value
              FROM policy.escalations WHERE state = 'PENDING' GROUP BY 1`,
    },
    {
      name: 'spend_worker_job_lag_seconds',
      help: 'How long the oldest due job of each worker queue has waited past its time (0: none due)',
      labels: ['job'],
      sql: `SELECT 'channel_notice' AS job,
                   coalesce(extract(epoch FROM now() - min(next_attempt_at)), 0) AS value
              FROM policy.channel_deliveries WHERE state = 'PENDING' AND next_attempt_at <= now()
            UNION ALL
            SELECT 'owner_webhook', coalesce(extract(epoch FROM now() - min(next_attempt_at)), 0)
              FROM policy.webhook_deliveries WHERE state = 'PENDING' AND next_attempt_at <= now()
            UNION ALL
            SELECT 'escalation_expiry', coalesce(extract(epoch FROM now() - min(expires_at)), 0)
              FROM policy.escalations WHERE state = 'PENDING' AND expires_at <= now()`,
    },
    {
      name: 'spend_webhook_deliveries_pending',
      help: 'Owner webhook deliveries waiting for a (re)try',
      labels: [],
      sql: `SELECT count(*) AS value FROM policy.webhook_deliveries WHERE state = 'PENDING'`,
    },
  ],
};
