// The two database roles: spend_control_owner owns every schema, table and function (migrations run
// as it), spend_control_service holds only the grants the running service needs and owns nothing,
// so it can neither disable a guard trigger nor change session_replication_role. Both are NOLOGIN
// groups; the logins that connect are their members. Creating them needs an admin (superuser).
import type { Db } from './handle';

export const OWNER_ROLE = 'spend_control_owner';

/**
 * Held (shared) while a database and its logins are being made (test databases, the schema dump's
 * scratch database), so that test teardown, which drops the group roles when nothing uses them any
 * more, never drops them from under a creator.
 */
export const ROLE_LIFECYCLE_LOCK_KEY = 7_302_114_565_012n;
export const SERVICE_ROLE = 'spend_control_service';

const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const PASSWORD = /^[0-9a-f]{32,128}$/;

function roleName(name: string): string {
  if (!ROLE_NAME.test(name)) throw new Error(`invalid role name ${JSON.stringify(name)}`);
  return name;
}

/**
 * Creates both group roles unless they exist. Roles are cluster-wide and several processes (jest
 * workers, replicas) may get here at once: the loser of a concurrent CREATE ROLE gets
 * unique_violation or duplicate_object, which means the role now exists.
 */
export async function ensureGroupRoles(client: Db): Promise<void> {
  for (const role of [OWNER_ROLE, SERVICE_ROLE]) {
    await client.query(`
      DO $$
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = '${role}') THEN
          CREATE ROLE ${role} NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
        END IF;
      EXCEPTION WHEN duplicate_object OR unique_violation THEN
        NULL;
      END
      $$`);
  }
}

/** A login that is a member of `group` (OWNER_ROLE or SERVICE_ROLE), with this password. Idempotent. */
export async function ensureLoginRole(
  client: Db,
  name: string,
  password: string,
  group: string,
): Promise<void> {
  const login = roleName(name);
  if (group !== OWNER_ROLE && group !== SERVICE_ROLE)
    throw new Error(`unknown group role ${group}`);
  if (!PASSWORD.test(password))
    throw new Error('role passwords are 32-128 lowercase hex characters');
  await client.query(`
    DO $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = '${login}') THEN
        CREATE ROLE ${login} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
      END IF;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
      NULL;
    END
    $$`);
  await client.query(`ALTER ROLE ${login} PASSWORD '${password}'`);
  await client.query(`GRANT ${group} TO ${login}`);
}

export async function dropLoginRole(client: Db, name: string): Promise<void> {
  await client.query(`DROP ROLE IF EXISTS ${roleName(name)}`);
}

/**
 * Run by an admin in the service's database: the group roles exist, the owner may create schemas
 * (and public.schema_migrations) and the service may connect. Idempotent.
 */
export async function prepareDatabaseRoles(client: Db): Promise<void> {
  await ensureGroupRoles(client);
  const { rows } = await client.query<{ db: string }>('SELECT current_database() AS db');
  const db = `"${rows[0].db.replace(/"/g, '""')}"`;
  await client.query(`GRANT CONNECT, CREATE, TEMPORARY ON DATABASE ${db} TO ${OWNER_ROLE}`);
  await client.query(`GRANT CONNECT ON DATABASE ${db} TO ${SERVICE_ROLE}`);
  await client.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${OWNER_ROLE}`);
  await client.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
}

/**
 * Run by an admin: objects an earlier version created as another role (a superuser, before these
 * roles existed) pass to OWNER_ROLE, so that migrations can change them. Idempotent.
 */
export async function adoptObjects(client: Db, schemas: readonly string[]): Promise<void> {
  await client.query(adoptObjectsSql(schemas));
}

/**
 * Hands to OWNER_ROLE what it does not own yet: the subgraphs' schemas, their relations (a sequence
 * that belongs to a column moves with its table), routines and standalone types, and
 * public.schema_migrations.
 */
function adoptObjectsSql(schemas: readonly string[]): string {
  const list = schemas.map((schema) => `'${roleName(schema)}'`).join(', ');
  return `
  DO $$
  DECLARE
    v_schemas text[] := ARRAY[${list}];
    v_owner oid := '${OWNER_ROLE}'::regrole;
    r record;
  BEGIN
    FOR r IN SELECT n.nspname FROM pg_catalog.pg_namespace n WHERE n.nspname = ANY (v_schemas) AND n.nspowner <> v_owner LOOP
      EXECUTE format('ALTER SCHEMA %I OWNER TO ${OWNER_ROLE}', r.nspname);
    END LOOP;
    FOR r IN
      SELECT c.oid::regclass AS rel,
             CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END AS kind
        FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relowner <> v_owner AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
         AND (n.nspname = ANY (v_schemas) OR (n.nspname = 'public' AND c.relname = 'schema_migrations'))
         AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                          WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid
                            AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.deptype IN ('a', 'i'))
    LOOP
      EXECUTE format('ALTER %s %s OWNER TO ${OWNER_ROLE}', r.kind, r.rel);
    END LOOP;
    FOR r IN
      SELECT p.oid::regprocedure AS fn, CASE p.prokind WHEN 'p' THEN 'PROCEDURE' WHEN 'a' THEN 'AGGREGATE' ELSE 'FUNCTION' END AS kind
        FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = ANY (v_schemas) AND p.proowner <> v_owner
    LOOP
      EXECUTE format('ALTER %s %s OWNER TO ${OWNER_ROLE}', r.kind, r.fn);
    END LOOP;
    FOR r IN
      SELECT t.oid::regtype AS typ, CASE t.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END AS kind
        FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
       WHERE n.nspname = ANY (v_schemas) AND t.typowner <> v_owner AND t.typtype IN ('e', 'd', 'r')
    LOOP
      EXECUTE format('ALTER %s %s OWNER TO ${OWNER_ROLE}', r.kind, r.typ);
    END LOOP;
  END
  $$`;
}

/**
 * What makes a connection unfit to run the service: it could bypass the database's guards. Empty
 * when it is a plain member of SERVICE_ROLE (or anything equally powerless).
 */
export async function serviceRoleProblems(client: Db): Promise<string[]> {
  const { rows } = await client.query<{
    user: string;
    rolsuper: boolean;
    rolbypassrls: boolean;
    rolcreaterole: boolean;
    owns: string | null;
  }>(`
    SELECT r.rolname AS user, r.rolsuper, r.rolbypassrls, r.rolcreaterole,
           coalesce(
             (SELECT 'schema ' || n.nspname FROM pg_catalog.pg_namespace n
               WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' AND pg_has_role(r.oid, n.nspowner, 'MEMBER') LIMIT 1),
             (SELECT 'table ' || c.oid::regclass FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' AND pg_has_role(r.oid, c.relowner, 'MEMBER') LIMIT 1),
             (SELECT 'function ' || p.oid::regprocedure FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
               WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' AND pg_has_role(r.oid, p.proowner, 'MEMBER') LIMIT 1)
           ) AS owns
      FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`);
  const role = rows[0];
  const problems: string[] = [];
  if (role.rolsuper) problems.push(`${role.user} is a superuser`);
  if (role.rolbypassrls) problems.push(`${role.user} bypasses row-level security (BYPASSRLS)`);
  if (role.rolcreaterole)
    problems.push(`${role.user} may create roles and grant itself others (CREATEROLE)`);
  if (role.owns !== null)
    problems.push(`${role.user} owns (or may act as the owner of) ${role.owns}`);
  return problems;
}
