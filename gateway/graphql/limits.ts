// Depth and cost limits for every operation the gateway accepts, checked after validation and
// before any subgraph is called. Cost counts each selected field once, multiplied by the page
// size of every list above it (the `first`/`limit` argument when given as a literal, else 10).
import {
  GraphQLError,
  Kind,
  getNamedType,
  isCompositeType,
  isListType,
  isNonNullType,
  type ArgumentNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { ApolloServerPlugin } from '@apollo/server';
import { ERROR_CODES } from '../../core/errors';

export const DEFAULT_LIST_SIZE = 10;

export interface OperationMeasure {
  depth: number;
  cost: number;
}

function returnsList(type: GraphQLOutputType): boolean {
  const inner = isNonNullType(type) ? type.ofType : type;
  return isListType(inner);
}

function pageSize(args: readonly ArgumentNode[]): number {
  for (const arg of args) {
    if ((arg.name.value === 'first' || arg.name.value === 'limit') && arg.value.kind === Kind.INT) {
      return Math.max(1, Number.parseInt(arg.value.value, 10));
    }
  }
  return DEFAULT_LIST_SIZE;
}

export function measureOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
): OperationMeasure {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const root =
    operation.operation === 'query'
      ? schema.getQueryType()
      : operation.operation === 'mutation'
        ? schema.getMutationType()
        : schema.getSubscriptionType();
  if (!root) return { depth: 0, cost: 0 };

  let maxDepth = 0;
  const walk = (
    selectionSet: SelectionSetNode,
    parent: GraphQLCompositeType,
    depth: number,
    multiplier: number,
    seenFragments: ReadonlySet<string>,
  ): number => {
    let cost = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value.startsWith('__')) continue;
        maxDepth = Math.max(maxDepth, depth);
        const fields = 'getFields' in parent ? parent.getFields() : {};
        const field = fields[selection.name.value];
        cost += multiplier;
        if (!field || !selection.selectionSet) continue;
        const named = getNamedType(field.type);
        if (!isCompositeType(named)) continue;
        const childMultiplier = returnsList(field.type)
          ? multiplier * pageSize(selection.arguments ?? [])
          : multiplier;
        cost += walk(selection.selectionSet, named, depth + 1, childMultiplier, seenFragments);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const typeName = selection.typeCondition?.name.value;
        const type = typeName ? schema.getType(typeName) : parent;
        if (type && isCompositeType(type)) cost += walk(selection.selectionSet, type, depth, multiplier, seenFragments);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || seenFragments.has(name)) continue;
        const type = schema.getType(fragment.typeCondition.name.value);
        if (type && isCompositeType(type)) {
          cost += walk(fragment.selectionSet, type, depth, multiplier, new Set([...seenFragments, name]));
        }
      }
    }
    return cost;
  };
  const cost = walk(operation.selectionSet, root, 1, 1, new Set());
  return { depth: maxDepth, cost };
}

function limitError(code: 'GRAPHQL_QUERY_TOO_DEEP' | 'GRAPHQL_QUERY_TOO_COSTLY', message: string): GraphQLError {
  const spec = ERROR_CODES[code];
  return new GraphQLError(message, {
    extensions: { code, status: spec.status, retryable: spec.retryable, http: { status: spec.status } },
  });
}

/** Rejects operations deeper than maxDepth or costlier than maxCost, before execution. */
export function operationLimitsPlugin(limits: { maxDepth: number; maxCost: number }): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation }) {
          if (!operation) return;
          const { depth, cost } = measureOperation(schema, document, operation);
          if (depth > limits.maxDepth) {
            throw limitError('GRAPHQL_QUERY_TOO_DEEP', `The query nests ${depth} levels; the limit is ${limits.maxDepth}.`);
          }
          if (cost > limits.maxCost) {
            throw limitError('GRAPHQL_QUERY_TOO_COSTLY', `The query costs ${cost}; the limit is ${limits.maxCost}.`);
          }
        },
      };
    },
  };
}
