-- Spend intents as bound by create_spend_intent: keyed by the EIP-712 intentHash, with the
-- canonical intent document kept verbatim. policy_id refers to policy.policies by value only:
-- no subgraph touches another's tables, so there is no cross-schema foreign key.
CREATE SCHEMA intent;

CREATE TABLE intent.spend_intents (
  intent_hash    text          PRIMARY KEY CHECK (intent_hash ~ '^0x[0-9a-f]{64}$'),
  policy_id      numeric(78,0) NOT NULL
                 CHECK (policy_id >= 0 AND policy_id < 115792089237316195423570985008687907853269984665640564039457584007913129639936),
  policy_version integer       NOT NULL CHECK (policy_version >= 1),
  agent_id       text          NOT NULL CHECK (agent_id ~ '^[A-Za-z0-9._:-]{1,128}$'),
  amount         numeric(78,0) NOT NULL CHECK (amount > 0),
  canonical      jsonb         NOT NULL CHECK (jsonb_typeof(canonical) = 'object'),
  created_at     timestamptz   NOT NULL DEFAULT now()
);
CREATE INDEX spend_intents_policy ON intent.spend_intents (policy_id, created_at);
