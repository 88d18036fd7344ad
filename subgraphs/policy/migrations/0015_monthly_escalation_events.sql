-- policy.escalation_events becomes a log partitioned by month of `at` (ledger migration 0013,
-- docs/operations.md "Partitioning the append-only tables"): same columns, checks, indexes, foreign
-- key, guard and grants; seq keeps counting from where it was. The primary key takes `at` (a
-- partitioned table's unique keys hold its partition key); seq alone still comes from one sequence.
ALTER TABLE policy.escalation_events RENAME TO escalation_events_unpartitioned;
ALTER TABLE policy.escalation_events_unpartitioned RENAME CONSTRAINT escalation_events_pkey TO escalation_events_unpartitioned_pkey;
ALTER INDEX policy.escalation_events_ref RENAME TO escalation_events_unpartitioned_ref;
ALTER INDEX policy.escalation_events_owner RENAME TO escalation_events_unpartitioned_owner;
ALTER SEQUENCE policy.escalation_events_seq_seq OWNED BY NONE;

CREATE TABLE policy.escalation_events (
  seq      bigint      NOT NULL DEFAULT nextval('policy.escalation_events_seq_seq'),
  poll_ref text        CONSTRAINT escalation_events_poll_ref_fkey REFERENCES policy.escalations (poll_ref),
  owner    text        CONSTRAINT escalation_events_owner_check CHECK (owner ~ '^0x[0-9a-f]{40}$'),
  kind     text        NOT NULL CONSTRAINT escalation_events_kind_check CHECK (kind IN (
             'CREATED', 'APPROVED', 'DENIED', 'EXPIRED', 'APPROVAL_USED',
             'REPLY_UNKNOWN_CODE', 'REPLY_CODE_REUSED', 'REPLY_UNBOUND_SENDER', 'REPLY_AFTER_EXPIRY', 'REPLY_ALREADY_RESOLVED',
             'DELIVERY_SENT', 'DELIVERY_FAILED', 'DELIVERY_GAVE_UP')),
  channel  text,
  sender   text,
  detail   text        CONSTRAINT escalation_events_detail_check CHECK (char_length(detail) <= 500),
  at       timestamptz NOT NULL,
  CONSTRAINT escalation_events_pkey PRIMARY KEY (seq, at)
) PARTITION BY RANGE (at);
ALTER SEQUENCE policy.escalation_events_seq_seq OWNED BY policy.escalation_events.seq;
CREATE INDEX escalation_events_ref ON policy.escalation_events (poll_ref, seq);
CREATE INDEX escalation_events_owner ON policy.escalation_events (owner, seq);
CREATE TABLE policy.escalation_events_pdefault PARTITION OF policy.escalation_events DEFAULT;
REVOKE ALL ON policy.escalation_events_pdefault FROM PUBLIC, spend_control_service;

SELECT ledger.ensure_month_partitions('policy.escalation_events',
                                      greatest(least(now(), (SELECT min(at) FROM policy.escalation_events_unpartitioned)), now() - interval '116 months'),
                                      now() + interval '3 months');
INSERT INTO policy.escalation_events (seq, poll_ref, owner, kind, channel, sender, detail, at)
  SELECT seq, poll_ref, owner, kind, channel, sender, detail, at FROM policy.escalation_events_unpartitioned;
DROP TABLE policy.escalation_events_unpartitioned;

-- Append-only, each row of every partition (the trigger is cloned onto each, made now or later).
CREATE TRIGGER escalation_events_append_only BEFORE UPDATE OR DELETE ON policy.escalation_events
  FOR EACH ROW EXECUTE FUNCTION policy.refuse_change_rewrite();

REVOKE ALL ON policy.escalation_events FROM PUBLIC, spend_control_service;
GRANT SELECT, INSERT ON policy.escalation_events TO spend_control_service;
