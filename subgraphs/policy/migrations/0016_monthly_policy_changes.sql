-- policy.policy_changes, the policies' audit log, becomes a log partitioned by month of `at`, as
-- policy.escalation_events did in 0015 (ledger migration 0013, docs/operations.md "Partitioning the
-- append-only tables"): same columns, checks, index, triggers and grants; seq keeps counting from
-- where it was. The triggers are made after the rows are copied, so the copy raises no owner event.
ALTER TABLE policy.policy_changes RENAME TO policy_changes_unpartitioned;
ALTER TABLE policy.policy_changes_unpartitioned RENAME CONSTRAINT policy_changes_pkey TO policy_changes_unpartitioned_pkey;
ALTER INDEX policy.policy_changes_policy RENAME TO policy_changes_unpartitioned_policy;
ALTER SEQUENCE policy.policy_changes_seq_seq OWNED BY NONE;

CREATE TABLE policy.policy_changes (
  seq       bigint        NOT NULL DEFAULT nextval('policy.policy_changes_seq_seq'),
  policy_id numeric(78,0) NOT NULL,
  version   integer       NOT NULL CONSTRAINT policy_changes_version_check CHECK (version >= 1),
  change    text          NOT NULL CONSTRAINT policy_changes_change_check
                          CHECK (change IN ('CREATED', 'UPDATED', 'PAUSED', 'RESUMED', 'REGISTERED')),
  actor     text          NOT NULL,
  at        timestamptz   NOT NULL,
  CONSTRAINT policy_changes_pkey PRIMARY KEY (seq, at)
) PARTITION BY RANGE (at);
ALTER SEQUENCE policy.policy_changes_seq_seq OWNED BY policy.policy_changes.seq;
CREATE INDEX policy_changes_policy ON policy.policy_changes (policy_id, seq);
CREATE TABLE policy.policy_changes_pdefault PARTITION OF policy.policy_changes DEFAULT;
REVOKE ALL ON policy.policy_changes_pdefault FROM PUBLIC, spend_control_service;

SELECT policy.ensure_month_partitions('policy.policy_changes',
                                      greatest(least(now(), (SELECT min(at) FROM policy.policy_changes_unpartitioned)), now() - interval '116 months'),
                                      now() + interval '3 months');
INSERT INTO policy.policy_changes (seq, policy_id, version, change, actor, at)
  SELECT seq, policy_id, version, change, actor, at FROM policy.policy_changes_unpartitioned;
DROP TABLE policy.policy_changes_unpartitioned;

-- Append-only, each row of every partition; each new row tells its owner (policy.changed), as before.
CREATE TRIGGER policy_changes_append_only BEFORE UPDATE OR DELETE ON policy.policy_changes
  FOR EACH ROW EXECUTE FUNCTION policy.refuse_change_rewrite();
CREATE TRIGGER policy_changes_owner_event AFTER INSERT ON policy.policy_changes
  FOR EACH ROW EXECUTE FUNCTION policy.policy_change_owner_event();

REVOKE ALL ON policy.policy_changes FROM PUBLIC, spend_control_service;
GRANT SELECT, INSERT ON policy.policy_changes TO spend_control_service;
