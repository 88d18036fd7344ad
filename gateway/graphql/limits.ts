// Size, depth and cost of an operation, measured after validation and before any subgraph is
// called, in time linear in the document: each fragment is measured once per request however often
// it is spread. Every field counts, `__typename` and the introspection fields included.
import {
  GraphQLError,
  Kind,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  getNamedType,
  isCompositeType,
  isListType,
  isNonNullType,
  type ArgumentNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { gatewayGraphQLError } from './errors';

/** The page size assumed for a list whose `first`/`limit` is not given. */
export const DEFAULT_LIST_SIZE = 10;

/** Limits checked on a resolved operation (the token limit applies earlier, at parse). */
export interface OperationLimits {
  readonly maxDepth: number;
  readonly maxCost: number;
  readonly maxFields: number;
  readonly maxAliases: number;
  readonly maxRootFields: number;
}

export interface OperationMeasure {
  /** The deepest selected field (a root field is depth 1); introspection subtrees count one level. */
  readonly depth: number;
  /** Each field once, multiplied by the page size of every list above it (flat inside introspection). */
  readonly cost: number;
  /** Selected fields with every fragment spread expanded. */
  readonly fields: number;
  readonly aliases: number;
  /** Root fields with every fragment spread expanded: what one request asks the subgraphs to run. */
  readonly rootFields: number;
  readonly rootFieldNames: ReadonlySet<string>;
}

/** One selection set's measure relative to where it is used: depth in levels below, cost per unit of page size. */
interface Summary {
  cost: number;
  depth: number;
  fields: number;
  aliases: number;
  topFields: number;
  topFieldNames: Set<string>;
}

const INTROSPECTION_ROOTS: Readonly<Record<string, GraphQLField<unknown, unknown>>> = {
  __schema: SchemaMetaFieldDef,
  __type: TypeMetaFieldDef,
};

function empty(): Summary {
  return { cost: 0, depth: 0, fields: 0, aliases: 0, topFields: 0, topFieldNames: new Set() };
}

function merge(into: Summary, part: Summary): void {
  into.cost += part.cost;
  into.depth = Math.max(into.depth, part.depth);
  into.fields += part.fields;
  into.aliases += part.aliases;
  into.topFields += part.topFields;
  for (const name of part.topFieldNames) into.topFieldNames.add(name);
}

function returnsList(type: GraphQLOutputType): boolean {
  const inner = isNonNullType(type) ? type.ofType : type;
  return isListType(inner);
}

/** `first`/`limit` as a literal or a variable of this request; else DEFAULT_LIST_SIZE. */
function pageSize(
  args: readonly ArgumentNode[],
  variables: Readonly<Record<string, unknown>>,
): number {
  for (const arg of args) {
    if (arg.name.value !== 'first' && arg.name.value !== 'limit') continue;
    if (arg.value.kind === Kind.INT) return Math.max(1, Number.parseInt(arg.value.value, 10));
    if (arg.value.kind === Kind.VARIABLE) {
      const given = variables[arg.value.name.value];
      if (typeof given === 'number' && Number.isSafeInteger(given)) return Math.max(1, given);
    }
  }
  return DEFAULT_LIST_SIZE;
}

class OperationMeter {
  private readonly fragments = new Map<string, FragmentDefinitionNode>();
  /** `<fragment>|<flat>` → its summary; null while it is being measured (a cycle adds nothing). */
  private readonly measured = new Map<string, Summary | null>();

  constructor(
    private readonly schema: GraphQLSchema,
    document: DocumentNode,
    private readonly variables: Readonly<Record<string, unknown>>,
  ) {
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION)
        this.fragments.set(definition.name.value, definition);
    }
  }

  /** `flat`: inside introspection, where every field costs one and adds no depth. */
  selections(selectionSet: SelectionSetNode, parent: GraphQLCompositeType, flat: boolean): Summary {
    const summary = empty();
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        merge(summary, this.field(selection, parent, flat));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const typeName = selection.typeCondition?.name.value;
        const type = typeName ? this.schema.getType(typeName) : parent;
        if (type && isCompositeType(type))
          merge(summary, this.selections(selection.selectionSet, type, flat));
      } else {
        merge(summary, this.fragment(selection.name.value, flat));
      }
    }
    return summary;
  }

  private field(node: FieldNode, parent: GraphQLCompositeType, flat: boolean): Summary {
    const name = node.name.value;
    const introspection = Object.hasOwn(INTROSPECTION_ROOTS, name)
      ? INTROSPECTION_ROOTS[name]
      : undefined;
    const definition =
      introspection ?? ('getFields' in parent ? parent.getFields()[name] : undefined);
    const childFlat = flat || introspection !== undefined;
    const named = definition ? getNamedType(definition.type) : undefined;
    const child =
      node.selectionSet && named && isCompositeType(named)
        ? this.selections(node.selectionSet, named, childFlat)
        : empty();
    const multiplier =
      !childFlat && definition && returnsList(definition.type)
        ? pageSize(node.arguments ?? [], this.variables)
        : 1;
    return {
      cost: 1 + multiplier * child.cost,
      depth: 1 + (childFlat ? 0 : child.depth),
      fields: 1 + child.fields,
      aliases: (node.alias ? 1 : 0) + child.aliases,
      topFields: 1,
      topFieldNames: new Set([name]),
    };
  }

  private fragment(name: string, flat: boolean): Summary {
    const key = `${name}|${flat}`;
    const known = this.measured.get(key);
    if (known !== undefined) return known ?? empty();
    const fragment = this.fragments.get(name);
    const type = fragment ? this.schema.getType(fragment.typeCondition.name.value) : undefined;
    if (!fragment || !type || !isCompositeType(type)) return empty();
    this.measured.set(key, null);
    const summary = this.selections(fragment.selectionSet, type, flat);
    this.measured.set(key, summary);
    return summary;
  }
}

function rootTypeOf(schema: GraphQLSchema, operation: OperationDefinitionNode) {
  if (operation.operation === 'query') return schema.getQueryType();
  if (operation.operation === 'mutation') return schema.getMutationType();
  return schema.getSubscriptionType();
}

export function measureOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> = {},
): OperationMeasure {
  const root = rootTypeOf(schema, operation);
  if (!root)
    return { depth: 0, cost: 0, fields: 0, aliases: 0, rootFields: 0, rootFieldNames: new Set() };
  const summary = new OperationMeter(schema, document, variables).selections(
    operation.selectionSet,
    root,
    false,
  );
  return {
    depth: summary.depth,
    cost: summary.cost,
    fields: summary.fields,
    aliases: summary.aliases,
    rootFields: summary.topFields,
    rootFieldNames: summary.topFieldNames,
  };
}

function tooLarge(limit: string, max: number, actual: number, what: string): GraphQLError {
  return gatewayGraphQLError('GRAPHQL_QUERY_TOO_LARGE', `The query ${what}; the limit is ${max}.`, {
    limit,
    max,
    actual,
  });
}

/**
 * The first limit the operation breaks, as the error to answer, or null. A mutation runs one root
 * field per request: aliases would repeat a state change (and its side effects) many times over.
 */
export function limitRefusal(
  measure: OperationMeasure,
  operationType: string,
  limits: OperationLimits,
): GraphQLError | null {
  if (operationType === 'mutation' && measure.rootFields > 1) {
    return tooLarge(
      'mutations',
      1,
      measure.rootFields,
      `runs ${measure.rootFields} mutation fields`,
    );
  }
  if (measure.rootFields > limits.maxRootFields) {
    return tooLarge(
      'rootFields',
      limits.maxRootFields,
      measure.rootFields,
      `selects ${measure.rootFields} root fields`,
    );
  }
  if (measure.aliases > limits.maxAliases)
    return tooLarge(
      'aliases',
      limits.maxAliases,
      measure.aliases,
      `uses ${measure.aliases} aliases`,
    );
  if (measure.fields > limits.maxFields)
    return tooLarge('fields', limits.maxFields, measure.fields, `selects ${measure.fields} fields`);
  if (measure.depth > limits.maxDepth) {
    return gatewayGraphQLError(
      'GRAPHQL_QUERY_TOO_DEEP',
      `The query nests ${measure.depth} levels; the limit is ${limits.maxDepth}.`,
    );
  }
  if (measure.cost > limits.maxCost) {
    return gatewayGraphQLError(
      'GRAPHQL_QUERY_TOO_COSTLY',
      `The query costs ${measure.cost}; the limit is ${limits.maxCost}.`,
    );
  }
  return null;
}
