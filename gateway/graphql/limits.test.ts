import { buildSchema, getIntrospectionQuery, parse, type OperationDefinitionNode } from 'graphql';
import { measureOperation, limitRefusal, DEFAULT_LIST_SIZE } from './limits';
import { GRAPHQL_LIMIT_DEFAULTS } from '../../platform/config';

const schema = buildSchema(`
  type Query { node(id: ID!): Node, nodes(first: Int): [Node!]! }
  type Mutation { touch(id: ID!): Node }
  type Node { id: ID!, name: String, children(first: Int): [Node!]!, parent: Node }
`);

function measure(source: string, variables: Record<string, unknown> = {}) {
  const document = parse(source);
  const operation = document.definitions.find(
    (d) => d.kind === 'OperationDefinition',
  ) as OperationDefinitionNode;
  return measureOperation(schema, document, operation, variables);
}

/** Fragments doubling at each level: 2^levels leaves, written in a few hundred bytes. */
function doublingFragments(
  levels: number,
  leafType: string,
  leaf: string,
  spreadInto = (spread: string) => spread,
): string {
  let source = `fragment F${levels} on ${leafType} { ${leaf} }`;
  for (let level = levels - 1; level >= 0; level -= 1) {
    source += ` fragment F${level} on ${leafType} { ${spreadInto(`...F${level + 1}`)} ${spreadInto(`...F${level + 1}`)} }`;
  }
  return source;
}

describe('operation limits', () => {
  it('counts depth as the deepest selected field', () => {
    expect(measure('{ node(id: "1") { id } }')).toMatchObject({
      depth: 2,
      cost: 2,
      fields: 2,
      aliases: 0,
      rootFields: 1,
    });
    expect(measure('{ node(id: "1") { parent { parent { id } } } }').depth).toBe(4);
  });

  it('multiplies the cost of fields under a list by its page size, literal or variable', () => {
    expect(measure('{ nodes(first: 3) { id name } }').cost).toBe(1 + 3 * 2);
    expect(measure('{ nodes { id } }').cost).toBe(1 + DEFAULT_LIST_SIZE);
    expect(measure('{ nodes(first: 2) { children(first: 5) { id } } }').cost).toBe(1 + 2 + 2 * 5);
    expect(measure('query ($n: Int) { nodes(first: $n) { id } }', { n: 400 }).cost).toBe(1 + 400);
  });

  it('follows fragments and inline fragments and counts __typename like any field', () => {
    const viaFragment = measure(
      'query Q { node(id: "1") { ...F } } fragment F on Node { parent { id __typename } }',
    );
    expect(viaFragment).toMatchObject({ depth: 3, cost: 4, fields: 4 });
    expect(measure('{ node(id: "1") { ... on Node { id } } }')).toMatchObject({
      depth: 2,
      cost: 2,
    });
    expect(measure('{ __typename a: __typename b: __typename }')).toMatchObject({
      cost: 3,
      fields: 3,
      aliases: 2,
      rootFields: 3,
    });
  });

  it('counts root fields and aliases through fragments, with the root field names', () => {
    const measured = measure(
      'mutation { ...M } fragment M on Mutation { a: touch(id: "1") { id } b: touch(id: "2") { id } }',
    );
    expect(measured).toMatchObject({ rootFields: 2, aliases: 2 });
    expect([...measured.rootFieldNames]).toEqual(['touch']);
  });

  it('measures fragments that double at each level once per fragment, with their full expanded size', () => {
    const source = `query { ...F0 } ${doublingFragments(22, 'Query', '__typename')}`;
    expect(source.length).toBeLessThan(1000);
    expect(measure(source)).toMatchObject({
      fields: 2 ** 22,
      rootFields: 2 ** 22,
      cost: 2 ** 22,
      depth: 1,
    });
    // 2^30 spreads: walking them one by one would not end within the test's timeout.
    const nested = measure(
      `{ node(id: "1") { ...F0 } } ${doublingFragments(30, 'Node', 'parent { id }')}`,
    );
    expect(nested).toMatchObject({ fields: 1 + 2 ** 31, depth: 3, rootFields: 1 });
  });

  it('lets the standard introspection query through the default limits, flat and shallow', () => {
    const introspection = buildSchema('type Query { a: Int }');
    const document = parse(getIntrospectionQuery());
    const operation = document.definitions.find(
      (d) => d.kind === 'OperationDefinition',
    ) as OperationDefinitionNode;
    const measured = measureOperation(introspection, document, operation);
    expect(measured.depth).toBe(1);
    expect(measured.cost).toBe(measured.fields);
    expect(limitRefusal(measured, 'query', GRAPHQL_LIMIT_DEFAULTS)).toBeNull();
  });

  it('refuses in a fixed order: mutations, root fields, aliases, fields, depth, cost', () => {
    const limits = {
      ...GRAPHQL_LIMIT_DEFAULTS,
      maxRootFields: 2,
      maxAliases: 1,
      maxFields: 5,
      maxDepth: 3,
      maxCost: 20,
    };
    const refusal = (source: string) =>
      limitRefusal(measure(source), source.startsWith('mutation') ? 'mutation' : 'query', limits)
        ?.extensions;
    expect(refusal('mutation { a: touch(id: "1") { id } b: touch(id: "2") { id } }')).toMatchObject(
      {
        code: 'GRAPHQL_QUERY_TOO_LARGE',
        details: { limit: 'mutations', max: 1, actual: 2 },
      },
    );
    expect(refusal('{ a: node(id: "1") { id } b: node(id: "2") { id } __typename }')).toMatchObject(
      { details: { limit: 'rootFields', max: 2, actual: 3 } },
    );
    expect(refusal('{ node(id: "1") { a: id b: id } }')).toMatchObject({
      details: { limit: 'aliases', max: 1, actual: 2 },
    });
    expect(refusal('{ node(id: "1") { id name parent { id name } } }')).toMatchObject({
      details: { limit: 'fields', max: 5, actual: 6 },
    });
    expect(refusal('{ node(id: "1") { parent { parent { id } } } }')).toMatchObject({
      code: 'GRAPHQL_QUERY_TOO_DEEP',
    });
    expect(refusal('{ nodes(first: 30) { id } }')).toMatchObject({
      code: 'GRAPHQL_QUERY_TOO_COSTLY',
    });
    expect(refusal('mutation { touch(id: "1") { id } }')).toBeUndefined();
  });
});
