import { buildSchema, parse, type OperationDefinitionNode } from 'graphql';
import { measureOperation, DEFAULT_LIST_SIZE } from './limits';

const schema = buildSchema(`
  type Query { node(id: ID!): Node, nodes(first: Int): [Node!]! }
  type Node { id: ID!, name: String, children(first: Int): [Node!]!, parent: Node }
`);

function measure(source: string) {
  const document = parse(source);
  const operation = document.definitions.find((d) => d.kind === 'OperationDefinition') as OperationDefinitionNode;
  return measureOperation(schema, document, operation);
}

describe('operation limits', () => {
  it('counts depth as the deepest selected field', () => {
    expect(measure('{ node(id: "1") { id } }')).toEqual({ depth: 2, cost: 2 });
    expect(measure('{ node(id: "1") { parent { parent { id } } } }').depth).toBe(4);
  });

  it('multiplies the cost of fields under a list by its page size', () => {
    expect(measure('{ nodes(first: 3) { id name } }').cost).toBe(1 + 3 * 2);
    expect(measure('{ nodes { id } }').cost).toBe(1 + DEFAULT_LIST_SIZE);
    expect(measure('{ nodes(first: 2) { children(first: 5) { id } } }').cost).toBe(1 + 2 + 2 * 5);
  });

  it('follows fragments and inline fragments without counting typename', () => {
    const viaFragment = measure('query Q { node(id: "1") { ...F } } fragment F on Node { parent { id __typename } }');
    expect(viaFragment).toEqual({ depth: 3, cost: 3 });
    expect(measure('{ node(id: "1") { ... on Node { id } } }')).toEqual({ depth: 2, cost: 2 });
  });
});
