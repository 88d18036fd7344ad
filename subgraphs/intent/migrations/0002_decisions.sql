-- Preflight storage: every decision with its full trace and engine identity, the reservations an
-- approval creates (authority, not spend), the approved-call records the rate, cooldown and
-- duplicate windows read, and the decision receipts. policy_id refers to policy.policies by value
-- only (no cross-schema foreign key). Every timestamp is the caller's injected clock, never now().
CREATE TABLE intent.decisions (
  decision_id        bigserial     PRIMARY KEY,
  intent_hash        text          NOT NULL CHECK (intent_hash ~ '^0x[0-9a-f]{64}$'),
  policy_id          text          NOT NULL CHECK (policy_id ~ '^[0-9]{1,78}$'),
  policy_version     integer       CHECK (policy_version >= 1),
  policy_hash        text          CHECK (policy_hash ~ '^0x[0-9a-f]{64}$'),
  decision           text          NOT NULL,
  outcome            text          NOT NULL CHECK (outcome IN ('APPROVED', 'BLOCKED', 'ESCALATED')),
  deciding_rule      text,
  rule_trace         jsonb         NOT NULL CHECK (jsonb_typeof(rule_trace) = 'array'),
  engine             jsonb         NOT NULL CHECK (jsonb_typeof(engine) = 'object'),
  fail_closed_reason text,
  evaluated_at       timestamptz   NOT NULL
);
CREATE INDEX decisions_policy ON intent.decisions (policy_id, evaluated_at DESC, decision_id DESC);
CREATE INDEX decisions_intent ON intent.decisions (intent_hash);

CREATE TABLE intent.reservations (
  reservation_id  text          PRIMARY KEY CHECK (reservation_id ~ '^rsv_[0-9a-f]{24}$'),
  decision_id     bigint        NOT NULL UNIQUE REFERENCES intent.decisions (decision_id),
  intent_hash     text          NOT NULL CHECK (intent_hash ~ '^0x[0-9a-f]{64}$'),
  policy_id       text          NOT NULL CHECK (policy_id ~ '^[0-9]{1,78}$'),
  amount          numeric(78,0) NOT NULL CHECK (amount > 0),
  asset           text          NOT NULL,
  day             date          NOT NULL,
  state           text          NOT NULL CHECK (state IN ('ACTIVE', 'CONSUMED', 'RELEASED', 'EXPIRED')),
  expires_at      timestamptz   NOT NULL,
  created_at      timestamptz   NOT NULL,
  updated_at      timestamptz   NOT NULL,
  settled_group_id text
);
CREATE INDEX reservations_window ON intent.reservations (policy_id, day, state);

CREATE TABLE intent.approved_calls (
  decision_id  bigint        PRIMARY KEY REFERENCES intent.decisions (decision_id),
  policy_id    text          NOT NULL CHECK (policy_id ~ '^[0-9]{1,78}$'),
  intent_hash  text          NOT NULL CHECK (intent_hash ~ '^0x[0-9a-f]{64}$'),
  provider     text          NOT NULL,
  agent_id     text          NOT NULL,
  capability   text          NOT NULL,
  recipient    text          NOT NULL,
  amount       numeric(78,0) NOT NULL CHECK (amount > 0),
  item_hash    text          NOT NULL,
  endpoint     text          NOT NULL,
  approved_at  timestamptz   NOT NULL
);
CREATE INDEX approved_calls_window ON intent.approved_calls (policy_id, approved_at DESC);

CREATE TABLE intent.decision_receipts (
  receipt_id   text          PRIMARY KEY CHECK (receipt_id ~ '^0x[0-9a-f]{64}$'),
  decision_id  bigint        NOT NULL UNIQUE REFERENCES intent.decisions (decision_id),
  intent_hash  text          NOT NULL,
  state        text          NOT NULL DEFAULT 'PENDING' CHECK (state IN ('PENDING', 'ANCHORED', 'ANCHOR_FAILED')),
  created_at   timestamptz   NOT NULL
);
