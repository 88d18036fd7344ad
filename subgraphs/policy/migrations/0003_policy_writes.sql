-- What creating and changing policies needs: the per-owner nonce that derives each policyId
-- (allocated by one upsert, so two concurrent creates never share a nonce), the owner nonce and
-- the writer on each version row, and an append-only audit of every change. Version rows are
-- never overwritten; only the latest row's status (ACTIVE/PAUSED) changes in place.
CREATE TABLE policy.owner_nonces (
  owner      text          PRIMARY KEY CHECK (owner ~ '^0x[0-9a-f]{40}$'),
  last_nonce numeric(78,0) NOT NULL CHECK (last_nonce >= 1)
);

-- Nullable: rows written before this migration (and test fixtures) have no recorded nonce.
ALTER TABLE policy.policies
  ADD COLUMN owner_nonce       numeric(78,0) CHECK (owner_nonce >= 1),
  ADD COLUMN created_by        text,
  ADD COLUMN status_changed_at timestamptz;

CREATE TABLE policy.policy_changes (
  seq        bigserial     PRIMARY KEY,
  policy_id  numeric(78,0) NOT NULL,
  version    integer       NOT NULL CHECK (version >= 1),
  change     text          NOT NULL CHECK (change IN ('CREATED', 'UPDATED', 'PAUSED', 'RESUMED', 'REGISTERED')),
  actor      text          NOT NULL,
  at         timestamptz   NOT NULL
);
CREATE INDEX policy_changes_policy ON policy.policy_changes (policy_id, seq);

CREATE FUNCTION policy.refuse_change_rewrite() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'policy.policy_changes is append-only';
END
$$;
CREATE TRIGGER policy_changes_append_only BEFORE UPDATE OR DELETE ON policy.policy_changes
  FOR EACH ROW EXECUTE FUNCTION policy.refuse_change_rewrite();
