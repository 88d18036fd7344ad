import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import type { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '../../platform/db/testDb';
import { projectRoot } from '../../platform/paths';
import { composeSupergraph } from '../../cli/compose';
import {
  createSubgraphServer,
  startSubgraphHttp,
  type SubgraphContext,
  type SubgraphHttpHandle,
} from '../kit';
import { openSubgraphDataSource, SUBGRAPH_MODULES } from '../registry';

const SECRET = randomBytes(32);
const SILENT = { debug() {}, info() {}, warn() {}, error() {} };
/** Subgraphs this test does not start are pointed at a closed port: the plan must not need them. */
const UNUSED_URL = 'http://127.0.0.1:9/graphql';

let db: TestDatabase;
let dataSource: DataSource;
const subgraphServers: Array<ApolloServer<SubgraphContext>> = [];
const listeners: SubgraphHttpHandle[] = [];
let gatewayServer: ApolloServer;
const subgraphRequests: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase({ subgraphs: ['catalog'] });
  dataSource = await openSubgraphDataSource(db.url, 'capability-join-test');
  const urls: Record<string, string> = {};
  for (const name of ['catalog', 'builder'] as const) {
    const server = await createSubgraphServer(SUBGRAPH_MODULES[name], {
      db: db.pool,
      dataSource,
      actorSecret: SECRET,
    });
    subgraphServers.push(server);
    const listener = await startSubgraphHttp(server, { host: '127.0.0.1', port: 0 });
    listeners.push(listener);
    urls[name] = listener.url;
  }
  const { supergraphSdl } = await composeSupergraph();
  const gateway = new ApolloGateway({
    supergraphSdl,
    logger: SILENT,
    buildService: ({ name }) =>
      new (class extends RemoteGraphQLDataSource {
        override willSendRequest(): void {
          subgraphRequests.push(name);
        }
      })({ url: urls[name] ?? UNUSED_URL }),
  });
  gatewayServer = new ApolloServer({ gateway, logger: SILENT });
  await gatewayServer.start();
});

afterAll(async () => {
  await gatewayServer?.stop();
  for (const listener of listeners) await listener.stop();
  for (const server of subgraphServers) await server.stop();
  await dataSource?.destroy();
  await db?.drop();
});

beforeEach(() => {
  subgraphRequests.length = 0;
});

async function execute(query: string, variables?: Record<string, unknown>) {
  const response = await gatewayServer.executeOperation({ query, variables });
  if (response.body.kind !== 'single') throw new Error('expected a single result');
  return response.body.singleResult;
}

test('capability(id) joins the catalog’s effective maturity with the builder’s tools', async () => {
  const result = await execute(`{
    capability(id: "domains.check") { id effectiveMaturity builderTools { path method } }
  }`);
  expect(result.errors).toBeUndefined();
  expect(result.data).toEqual({
    capability: {
      id: 'domains.check',
      effectiveMaturity: 'VERIFIED',
      builderTools: [
        { path: '/builder/brand_pack', method: 'POST' },
        { path: '/builder/check_domains', method: 'POST' },
      ],
    },
  });
  expect(subgraphRequests).toEqual(['catalog', 'builder']);
});

test('a list of capabilities is joined in one batched entity fetch', async () => {
  const result = await execute('{ catalog { capabilities { id builderTools { path } } } }');
  expect(result.errors).toBeUndefined();
  const capabilities = (
    result.data as { catalog: { capabilities: Array<{ id: string; builderTools: unknown[] }> } }
  ).catalog.capabilities;
  expect(capabilities).toHaveLength(10);
  expect(capabilities.filter((c) => c.builderTools.length > 0).map((c) => c.id)).toEqual([
    'domains.check',
  ]);
  expect(subgraphRequests).toEqual(['catalog', 'builder']);
});

test('the persisted catalog document runs through the gateway from the catalog subgraph alone', async () => {
  const document = readFileSync(
    path.join(projectRoot(), 'gateway', 'rest', 'documents', 'catalog.graphql'),
    'utf8',
  );
  const result = await execute(document);
  expect(result.errors).toBeUndefined();
  const catalog = (
    result.data as {
      catalog: { execution: { providersExecutableToday: string[] }; gatedRails: unknown[] };
    }
  ).catalog;
  expect(catalog.execution.providersExecutableToday).toEqual(['spendctl-domains']);
  expect(catalog.gatedRails).toHaveLength(2);
  expect(subgraphRequests).toEqual(['catalog']);
});
