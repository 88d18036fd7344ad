// For the intent subgraph's module tests: a resolver context on a test database (the caller's
// clock, a fresh sealing key), policies created through the policy subgraph's writes, and fresh
// wire intents (their own nonce and item, so never a duplicate unless a test asks).
import { randomBytes } from 'node:crypto';
import { policyDocument, rulesOf, wireIntent } from '../../core/test-support/spend-fixtures';
import { formatIsoSeconds } from '../../core/validation/timestamp';
import type { TestDatabase } from '../../platform/db/testDb';
import { deriveSealingKey } from '../../platform/sealing';
import type { SubgraphContext } from '../kit';
import { createPolicy } from '../policy/writes';

export interface CreatedPolicy {
  policyId: string;
  policyHash: string;
  version: number;
}

export interface IntentTestKit {
  readonly ctx: SubgraphContext;
  newPolicy(overrides?: Record<string, unknown>): Promise<CreatedPolicy>;
  /** A fresh intent for the policy, its deadline an hour after the clock. */
  intentFor(policy: Pick<CreatedPolicy, 'policyId' | 'policyHash'>, overrides?: Record<string, unknown>): Record<string, unknown>;
}

export function intentTestKit(db: TestDatabase, nowMs: () => number): IntentTestKit {
  let nonce = 0;
  return {
    ctx: {
      actor: { kind: 'anonymous' },
      db: db.pool,
      now: () => new Date(nowMs()),
      correlationId: 'cor_0123456789abcdef',
      sealingKey: deriveSealingKey(randomBytes(32)),
    },
    async newPolicy(overrides = {}) {
      const rules = rulesOf(policyDocument({ owner: `0x${randomBytes(20).toString('hex')}`, ...overrides }));
      const row = await createPolicy({ db: db.pool }, rules, { actor: 'admin', at: new Date(nowMs()) });
      return { policyId: row.id, policyHash: row.policyHash, version: row.version };
    },
    intentFor(policy, overrides = {}) {
      nonce += 1;
      return {
        ...wireIntent({ policyId: policy.policyId, policyHash: policy.policyHash } as never),
        item: { n: nonce },
        nonce: String(nonce),
        deadline: formatIsoSeconds(Math.floor(nowMs() / 1000) + 3600),
        ...overrides,
      };
    },
  };
}
