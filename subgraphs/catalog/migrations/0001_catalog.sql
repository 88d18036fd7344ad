-- The catalog: providers, their capabilities, gated settlement rails, and an audit trail of every
-- maturity change. Maturity words are the spec's lowercase words; the GraphQL enum names them in
-- upper case. A maturity UPDATE that changes the value publishes on channel `catalog_changed`
-- (NOTIFY is delivered on commit only, so listeners never see a rolled-back change).
CREATE SCHEMA catalog;

CREATE TABLE catalog.providers (
  id         text        PRIMARY KEY CHECK (id ~ '^[a-z][a-z0-9-]{0,62}$'),
  name       text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  kind       text        NOT NULL CHECK (kind ~ '^[a-z][a-z0-9_]{0,31}$'),
  maturity   text        NOT NULL CHECK (maturity IN ('experimental', 'sandbox', 'verified')),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- A capability id ending in `.*` is a family entry: it stands for every capability under that
-- prefix (`shop.*` covers `shop.order`), exactly as the spec's catalog table lists them.
CREATE TABLE catalog.capabilities (
  id          text        PRIMARY KEY CHECK (id ~ '^[a-z][a-z0-9_]*(\.[a-z0-9_*]+)*$' AND length(id) <= 64),
  provider_id text        NOT NULL REFERENCES catalog.providers (id),
  maturity    text        NOT NULL CHECK (maturity IN ('experimental', 'sandbox', 'verified')),
  moves_money boolean     NOT NULL,
  gate_code   text        CHECK (gate_code ~ '^[A-Z][A-Z0-9_]*_GATED$'),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX capabilities_provider ON catalog.capabilities (provider_id);

-- Settlement rails that exist in code but refuse to settle, each with its named refusal.
CREATE TABLE catalog.gated_rails (
  rail         text PRIMARY KEY CHECK (rail ~ '^[a-z][a-z0-9-]{0,31}$'),
  refusal_code text NOT NULL CHECK (refusal_code ~ '^[A-Z][A-Z0-9_]*_GATED$')
);

CREATE TABLE catalog.maturity_changes (
  id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  subject_kind  text        NOT NULL CHECK (subject_kind IN ('provider', 'capability')),
  subject_id    text        NOT NULL,
  from_maturity text        NOT NULL CHECK (from_maturity IN ('experimental', 'sandbox', 'verified')),
  to_maturity   text        NOT NULL CHECK (to_maturity IN ('experimental', 'sandbox', 'verified')),
  reason        text        NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
  actor         text        NOT NULL CHECK (length(actor) BETWEEN 1 AND 200),
  changed_at    timestamptz NOT NULL
);
CREATE INDEX maturity_changes_subject ON catalog.maturity_changes (subject_kind, subject_id, changed_at);

-- Payload kept far below NOTIFY's 8000-byte cap: ids and states only.
CREATE FUNCTION catalog.notify_maturity_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('catalog_changed', json_build_object(
    'kind', TG_ARGV[0],
    'id', NEW.id,
    'maturity', NEW.maturity,
    'changedAt', to_char(NEW.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  )::text);
  RETURN NEW;
END
$$;

CREATE TRIGGER providers_maturity_changed
  AFTER UPDATE OF maturity ON catalog.providers
  FOR EACH ROW WHEN (OLD.maturity IS DISTINCT FROM NEW.maturity)
  EXECUTE FUNCTION catalog.notify_maturity_changed('provider');

CREATE TRIGGER capabilities_maturity_changed
  AFTER UPDATE OF maturity ON catalog.capabilities
  FOR EACH ROW WHEN (OLD.maturity IS DISTINCT FROM NEW.maturity)
  EXECUTE FUNCTION catalog.notify_maturity_changed('capability');

INSERT INTO catalog.providers (id, name, kind, maturity) VALUES
  ('spendctl-domains',  'SpendCtl Domains',  'domains',  'verified'),
  ('spendctl-travel',   'SpendCtl Travel',   'travel',   'sandbox'),
  ('spendctl-email',    'SpendCtl Email',    'email',    'sandbox'),
  ('spendctl-shopping', 'SpendCtl Shopping', 'shopping', 'experimental'),
  ('spendctl-gifts',    'SpendCtl Gifts',    'gifts',    'experimental');

INSERT INTO catalog.capabilities (id, provider_id, maturity, moves_money, gate_code) VALUES
  ('domains.check',    'spendctl-domains',  'verified',     true,  NULL),
  ('domains.quote',    'spendctl-domains',  'sandbox',      false, NULL),
  ('domains.register', 'spendctl-domains',  'sandbox',      false, 'DOMAIN_REGISTRATION_GATED'),
  ('domains.renew',    'spendctl-domains',  'sandbox',      false, 'DOMAIN_REGISTRATION_GATED'),
  ('domains.dns',      'spendctl-domains',  'experimental', false, NULL),
  ('travel.search',    'spendctl-travel',   'sandbox',      false, 'TRAVEL_BOOKING_GATED'),
  ('travel.compare',   'spendctl-travel',   'sandbox',      false, 'TRAVEL_BOOKING_GATED'),
  ('notify.*',         'spendctl-email',    'sandbox',      false, 'NOTIFICATION_SENDING_GATED'),
  ('shop.*',           'spendctl-shopping', 'experimental', false, 'SHOPPING_GATED'),
  ('gifts.*',          'spendctl-gifts',    'experimental', false, 'GIFT_ORDERING_GATED');

INSERT INTO catalog.gated_rails (rail, refusal_code) VALUES
  ('solana', 'SOLANA_SETTLEMENT_GATED'),
  ('tempo',  'TEMPO_SETTLEMENT_GATED');
