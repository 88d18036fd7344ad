-- On-chain registrations as read from confirmed PolicyRegistry events: one row per event, so the
-- history of registrations and hash updates stays visible; the newest block is the current one.
-- A row is written only after its policyHash was checked against the policy's stored hash.
CREATE TABLE policy.registrations (
  policy_id    numeric(78,0) NOT NULL,
  version      integer       NOT NULL CHECK (version >= 1),
  chain_id     bigint        NOT NULL CHECK (chain_id >= 1),
  registry     text          NOT NULL CHECK (registry ~ '^0x[0-9a-f]{40}$'),
  tx_hash      text          NOT NULL CHECK (tx_hash ~ '^0x[0-9a-f]{64}$'),
  block_number numeric(78,0) NOT NULL CHECK (block_number >= 0),
  log_index    integer       NOT NULL CHECK (log_index >= 0),
  event        text          NOT NULL CHECK (event IN ('PolicyRegistered', 'PolicyUpdated')),
  policy_hash  text          NOT NULL CHECK (policy_hash ~ '^0x[0-9a-f]{64}$'),
  recorded_at  timestamptz   NOT NULL,
  recorded_by  text          NOT NULL,
  PRIMARY KEY (chain_id, tx_hash, log_index)
);
CREATE INDEX registrations_policy ON policy.registrations (policy_id, block_number DESC, log_index DESC);
