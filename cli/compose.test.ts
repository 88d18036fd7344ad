import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSubgraphSchema, printSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import type { SubgraphModule } from '../subgraphs/kit';
import { subgraphModules } from '../subgraphs/registry';
import { checkSchemas, composeSupergraph, defaultSchemaDir, main, writeSchemas } from './compose';

/** A copy of a registry module whose printed SDL is edited in memory; committed files stay untouched. */
function withEditedSdl(name: string, edit: (sdl: string) => string): SubgraphModule[] {
  return subgraphModules().map((module) =>
    module.name !== name
      ? module
      : {
          name: module.name,
          buildSchema: async () => {
            const sdl = printSubgraphSchema(await module.buildSchema());
            const edited = edit(sdl);
            if (edited === sdl) throw new Error('the edit changed nothing');
            return buildSubgraphSchema(parse(edited));
          },
        },
  );
}

const temporaryDirs: string[] = [];
function temporaryDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'compose-test-'));
  temporaryDirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
});

test('the committed schema/ files match a fresh composition and every persisted document validates', async () => {
  const result = await checkSchemas();
  expect(result).toMatchObject({
    ok: true,
    errors: [],
    drift: [],
    invalidDocuments: [],
    breakingChanges: [],
  });
});

test('composition writes the five subgraphs with canonical URLs and an API schema without federation machinery', async () => {
  const composed = await composeSupergraph();
  expect(Object.keys(composed.subgraphSdl)).toEqual([
    'catalog',
    'ledger',
    'policy',
    'intent',
    'builder',
  ]);
  expect(composed.supergraphSdl).toContain(
    '@join__graph(name: "catalog", url: "http://catalog:4101/graphql")',
  );
  expect(composed.supergraphSdl).toContain(
    '@join__graph(name: "builder", url: "http://builder:4105/graphql")',
  );
  expect(composed.apiSdl).toContain('builderTools: [BuilderTool!]!');
  expect(composed.apiSdl).not.toMatch(/join__|_entities|_service/);
});

test('a changed subgraph schema is reported as drift, a breaking change and an invalid persisted document', async () => {
  const modules = withEditedSdl('catalog', (sdl) =>
    sdl.replace('effectiveMaturity: Maturity!', 'effectiveLevel: Maturity!'),
  );
  const result = await checkSchemas({ modules });
  expect(result.ok).toBe(false);
  expect(result.drift).toEqual([
    'schema/catalog.graphql differs from a fresh composition',
    'schema/supergraph.graphql differs from a fresh composition',
    'schema/api.graphql differs from a fresh composition',
  ]);
  expect(result.breakingChanges).toEqual([
    "Field 'effectiveMaturity' was removed from object type 'Capability'",
  ]);
  expect(result.invalidDocuments).toEqual(
    expect.arrayContaining([
      'catalog.graphql: Cannot query field "effectiveMaturity" on type "Capability".',
      'setCapabilityMaturity.graphql: Cannot query field "effectiveMaturity" on type "Capability".',
      'setProviderMaturity.graphql: Cannot query field "effectiveMaturity" on type "Capability".',
    ]),
  );
});

test('an additive change is drift but not a breaking change', async () => {
  const modules = withEditedSdl('builder', (sdl) =>
    sdl.replace('  purpose: String!', '  purpose: String!\n  priceAtomic: String'),
  );
  const result = await checkSchemas({ modules });
  expect(result.ok).toBe(false);
  expect(result.drift).toContain('schema/builder.graphql differs from a fresh composition');
  expect(result.breakingChanges).toEqual([]);
  expect(result.invalidDocuments).toEqual([]);
});

test('a persisted document that no longer validates fails the check even without drift', async () => {
  const documentsDir = temporaryDir();
  writeFileSync(
    path.join(documentsDir, 'good.graphql'),
    'query Good { catalog { maturityOrder } }\n',
  );
  writeFileSync(
    path.join(documentsDir, 'stale.graphql'),
    'query Stale { catalog { providers { id website } } }\n',
  );
  writeFileSync(path.join(documentsDir, 'anonymous.graphql'), '{ catalog { maturityOrder } }\n');
  writeFileSync(path.join(documentsDir, 'broken.graphql'), 'query Broken { catalog {\n');
  const result = await checkSchemas({ documentsDir });
  expect(result.ok).toBe(false);
  expect(result.drift).toEqual([]);
  expect(result.invalidDocuments).toEqual([
    'anonymous.graphql: must hold exactly one named operation',
    'broken.graphql: Syntax Error: Expected Name, found <EOF>.',
    'stale.graphql: Cannot query field "website" on type "Provider".',
  ]);
});

test('subgraphs that cannot compose are reported as composition errors', async () => {
  const modules = withEditedSdl('builder', (sdl) =>
    sdl.replace('  id: ID!', '  id: ID!\n  movesMoney: String'),
  );
  const result = await checkSchemas({ modules });
  expect(result.ok).toBe(false);
  expect(result.errors.join('\n')).toMatch(/movesMoney/);
});

test('written schemas pass the check, stale files are removed, and a stray file counts as drift', async () => {
  const schemaDir = temporaryDir();
  writeFileSync(path.join(schemaDir, 'retired.graphql'), 'type Query { old: String }\n');
  const written = await writeSchemas({ schemaDir });
  expect(written.removed).toEqual(['retired.graphql']);
  expect(readFileSync(path.join(schemaDir, 'api.graphql'), 'utf8')).toBe(
    readFileSync(path.join(defaultSchemaDir(), 'api.graphql'), 'utf8'),
  );
  expect((await checkSchemas({ schemaDir })).ok).toBe(true);

  writeFileSync(path.join(schemaDir, 'stray.graphql'), 'type Query { stray: String }\n');
  expect((await checkSchemas({ schemaDir })).drift).toEqual([
    'schema/stray.graphql is not produced by any subgraph',
  ]);
});

test('main --check exits 0 on the committed files and 2 on unknown arguments', async () => {
  const lines: string[] = [];
  const io = {
    out: (line: string) => lines.push(`out: ${line}`),
    err: (line: string) => lines.push(`err: ${line}`),
  };
  expect(await main(['--check'], io)).toBe(0);
  expect(lines).toContain(
    'out: compose --check: schema/ matches a fresh composition and every persisted document validates',
  );
  expect(await main(['--force'], io)).toBe(2);
  expect(lines[lines.length - 1]).toBe('err: usage: spend-control compose [--check]');
});
