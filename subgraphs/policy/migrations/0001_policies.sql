-- Spend policies, one row per version. policy_id is a decimal uint256 (read it as text, never as a
-- JS number); EXPIRED is derived from expires_at and never stored. Later migrations add the
-- escalation tables and the SQL functions other subgraphs may call.
CREATE SCHEMA policy;

CREATE TABLE policy.policies (
  policy_id   numeric(78,0) NOT NULL
              CHECK (policy_id >= 0 AND policy_id < 115792089237316195423570985008687907853269984665640564039457584007913129639936),
  version     integer       NOT NULL CHECK (version >= 1),
  owner       text          NOT NULL CHECK (owner ~ '^0x[0-9a-f]{40}$'),
  status      text          NOT NULL CHECK (status IN ('ACTIVE', 'PAUSED')),
  policy_hash text          NOT NULL CHECK (policy_hash ~ '^0x[0-9a-f]{64}$'),
  rules       jsonb         NOT NULL CHECK (jsonb_typeof(rules) = 'object'),
  expires_at  timestamptz,
  created_at  timestamptz   NOT NULL DEFAULT now(),
  PRIMARY KEY (policy_id, version)
);
CREATE INDEX policies_owner ON policy.policies (owner);
