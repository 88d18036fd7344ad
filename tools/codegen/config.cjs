// GraphQL Code Generator over the REST documents (gateway/rest/documents, shared fragments
// included) against the composed API schema (schema/api.graphql, written by `spend-control
// compose`): one TypeScript type per operation's data and variables, plus the map from operation
// name to them (operationMap.cjs) that types each route's `respond(data)`.
//   npm run codegen           writes gateway/rest/generated/operations.ts
//   npm run codegen -- --check   fails when the committed file is stale (gateway/rest/generated.test.ts
//                                runs the same comparison in the test run)
'use strict';
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');

/** @type {import('@graphql-codegen/cli').CodegenConfig} */
module.exports = {
  overwrite: true,
  silent: true,
  schema: path.join(root, 'schema', 'api.graphql'),
  documents: [path.join(root, 'gateway', 'rest', 'documents', '**', '*.graphql')],
  generates: {
    [path.join(root, 'gateway', 'rest', 'generated', 'operations.ts')]: {
      plugins: [path.join(__dirname, 'operationMap.cjs'), 'typescript-operations'],
      config: {
        enumType: 'string-literal',
        skipTypename: true,
        avoidOptionals: true,
        immutableTypes: true,
        useTypeImports: true,
        scalars: {
          ID: { input: 'string', output: 'string' },
          JSONObject: { input: 'Record<string, unknown>', output: 'Record<string, unknown>' },
          DateTimeISO: { input: 'string', output: 'string' },
          PolicyInput: { input: 'Record<string, unknown>', output: 'Record<string, unknown>' },
        },
      },
    },
  },
};
