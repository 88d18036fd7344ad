// docker-compose.yml cannot run here (no Docker), so its shape is checked: it parses as YAML, runs
// the fleet of issue #32 (PostgreSQL, PgBouncer, haproxy, the worker, each subgraph role, two
// gateways), starts only roles the CLI knows, sets only variables docs/operations.md documents,
// sends the service pools through PgBouncer in transaction mode with LISTEN and migrations direct,
// and haproxy balances exactly the gateways' ports.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { ROLES } from '../../cli/startup';
import { DEVNET_RELAYER_SLOTS } from '../../platform/chain/keys';
import { REPO_ROOT } from './importGraph';

interface Service {
  readonly image?: string;
  readonly command?: string[];
  readonly environment?: Record<string, string>;
  readonly network_mode?: string;
}

const compose = load(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, Service>;
};
const services = compose.services;
const haproxy = readFileSync(join(REPO_ROOT, 'deploy', 'haproxy.cfg'), 'utf8');
const pgbouncer = readFileSync(join(REPO_ROOT, 'deploy', 'pgbouncer.ini'), 'utf8');
const operations = readFileSync(join(REPO_ROOT, 'docs', 'operations.md'), 'utf8');
const names = new Set([...operations.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1]));

/** Named in full, or in a row's shorthand (`SUBGRAPH_URL_CATALOG`, `_LEDGER`, …). */
function documented(name: string): boolean {
  if (names.has(name)) return true;
  const cut = name.lastIndexOf('_');
  const stem = name.slice(0, cut);
  return (
    [...names].some((other) => other.startsWith(`${stem}_`)) &&
    operations.includes(`\`${name.slice(cut)}\``)
  );
}

const roleOf = (service: Service): string | null => {
  const command = service.command ?? [];
  const at = command.indexOf('--role');
  return command[0] === 'start' && at >= 0 ? command[at + 1] : null;
};
const byRole = (role: string) =>
  Object.entries(services).filter(([, service]) => roleOf(service) === role);

test('the fleet: PostgreSQL, PgBouncer, haproxy, the worker, every subgraph role and two gateways', () => {
  expect(services).toEqual(
    expect.objectContaining({
      postgres: expect.anything(),
      pgbouncer: expect.anything(),
      haproxy: expect.anything(),
    }),
  );
  for (const role of ['catalog', 'ledger', 'policy', 'intent', 'builder', 'worker'])
    expect(byRole(role)).toHaveLength(1);
  expect(byRole('gateway').length).toBeGreaterThanOrEqual(2);
});

test('every role started is one the CLI knows, and every variable set is documented', () => {
  for (const service of Object.values(services)) {
    const role = roleOf(service);
    if (role !== null) expect(ROLES).toContain(role);
    for (const name of Object.keys(service.environment ?? {})) {
      if (name.startsWith('POSTGRES_')) continue; // the postgres image's own
      expect({ name, documented: documented(name) }).toEqual({ name, documented: true });
    }
  }
});

test('service pools go through PgBouncer in transaction mode; LISTEN and migrations go direct', () => {
  expect(pgbouncer).toMatch(/^pool_mode = transaction$/m);
  const port = /^listen_port = (\d+)$/m.exec(pgbouncer)![1];
  const apps = Object.values(services).filter((service) => roleOf(service) !== null);
  expect(apps.length).toBeGreaterThanOrEqual(8);
  for (const { environment } of apps) {
    expect(new URL(environment!.DATABASE_URL).port).toBe(port);
    expect(new URL(environment!.DATABASE_LISTEN_URL).host).toBe('postgres:5432');
    expect(new URL(environment!.MIGRATION_DATABASE_URL).host).toBe('postgres:5432');
  }
});

test('haproxy balances the gateways round-robin, checked on /readyz', () => {
  const gatewayPorts = byRole('gateway').map(([, service]) => service.environment!.PORT);
  const servers = [...haproxy.matchAll(/^\s*server \S+ 127\.0\.0\.1:(\d+) check$/gm)].map(
    (match) => match[1],
  );
  expect(servers.sort()).toEqual(gatewayPorts.sort());
  expect(haproxy).toMatch(/balance roundrobin/);
  expect(haproxy).toMatch(/option httpchk GET \/readyz/);
});

test('each process that sends transactions on the devnet (gateways, worker) has a relayer slot of its own', () => {
  const senders = [...byRole('gateway'), ...byRole('worker')];
  const slots = senders.map(([name, service]) => ({
    name,
    slot: Number(service.environment?.DEVNET_RELAYER_SLOT),
  }));
  for (const { name, slot } of slots) {
    expect({ name, inRange: slot >= 1 && slot <= DEVNET_RELAYER_SLOTS }).toEqual({
      name,
      inRange: true,
    });
  }
  expect(new Set(slots.map(({ slot }) => slot)).size).toBe(senders.length);
});
