-- What the service role (spend_control_service, platform/db/roles.ts) may do in the catalog: read
-- it, change a maturity (only that column and its timestamp) and record the change. Everything
-- else is the owner's, who runs the migrations. Tables added later get the migrator's default
-- privileges; set them here for the tables that predate the roles.
GRANT USAGE ON SCHEMA catalog TO spend_control_service;

REVOKE ALL ON catalog.providers, catalog.capabilities, catalog.gated_rails, catalog.maturity_changes
  FROM spend_control_service;
GRANT SELECT ON catalog.providers, catalog.capabilities, catalog.gated_rails, catalog.maturity_changes
  TO spend_control_service;
GRANT UPDATE (maturity, updated_at) ON catalog.providers, catalog.capabilities TO spend_control_service;
GRANT INSERT ON catalog.maturity_changes TO spend_control_service;
