// Which GraphQL fields the priced REST routes sell, read from the route table and its persisted
// documents: a request may run one of those root fields only as the REST layer's paid call for a
// route that sells it, so /graphql can never run them around the paywall, for any actor.
import {
  Kind,
  parse,
  type DocumentNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { isPriced, type RouteDefinition } from '../rest/types';
import { gatewayGraphQLError } from './errors';

/** `Mutation.preflightPayment` → the priced routes (`POST /preflight_payment`) whose call may run it. */
export type PaidFields = ReadonlyMap<string, readonly string[]>;

const ROOT_TYPE_NAMES: Readonly<Record<OperationDefinitionNode['operation'], string>> = {
  query: 'Query',
  mutation: 'Mutation',
  subscription: 'Subscription',
};

/** A route as the paywall and the paid-call claim name it. */
export function routeKey(route: Pick<RouteDefinition, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

/** `Query.detectDuplicate` for a root field of an operation of this type. */
export function rootCoordinate(
  operationType: OperationDefinitionNode['operation'],
  field: string,
): string {
  return `${ROOT_TYPE_NAMES[operationType]}.${field}`;
}

function topFieldNames(
  document: DocumentNode,
  selectionSet: SelectionSetNode,
  seen: Set<string>,
  into: Set<string>,
): void {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) into.add(selection.name.value);
    else if (selection.kind === Kind.INLINE_FRAGMENT)
      topFieldNames(document, selection.selectionSet, seen, into);
    else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = document.definitions.find(
        (definition) =>
          definition.kind === Kind.FRAGMENT_DEFINITION &&
          definition.name.value === selection.name.value,
      );
      if (fragment?.kind === Kind.FRAGMENT_DEFINITION)
        topFieldNames(document, fragment.selectionSet, seen, into);
    }
  }
}

/** The root field coordinates a route's persisted operation runs (none for a handler route). */
export function routeRootFields(
  route: RouteDefinition,
  documents: ReadonlyMap<string, string>,
): string[] {
  if (!route.operation) return [];
  const source = documents.get(route.operation.document);
  if (source === undefined)
    throw new Error(
      `route ${routeKey(route)}: no persisted document ${route.operation.document}.graphql`,
    );
  const document = parse(source);
  const operation = document.definitions.find(
    (definition): definition is OperationDefinitionNode =>
      definition.kind === Kind.OPERATION_DEFINITION &&
      definition.name?.value === route.operation!.operationName,
  );
  if (!operation)
    throw new Error(
      `route ${routeKey(route)}: ${route.operation.document}.graphql has no operation ${route.operation.operationName}`,
    );
  const names = new Set<string>();
  topFieldNames(document, operation.selectionSet, new Set(), names);
  return [...names].map((name) => rootCoordinate(operation.operation, name));
}

/**
 * Every root field a priced route runs, with the routes that sell it. A field that a free route
 * also runs is a contradiction (it would be sold and given away): refused at start-up.
 */
export function paidFieldsOf(
  routes: readonly RouteDefinition[],
  documents: ReadonlyMap<string, string>,
): PaidFields {
  const paid = new Map<string, string[]>();
  for (const route of routes) {
    if (!isPriced(route.price)) continue;
    for (const field of routeRootFields(route, documents))
      paid.set(field, [...(paid.get(field) ?? []), routeKey(route)]);
  }
  for (const route of routes) {
    if (isPriced(route.price)) continue;
    for (const field of routeRootFields(route, documents)) {
      const sellers = paid.get(field);
      if (sellers)
        throw new Error(
          `route ${routeKey(route)} runs ${field}, which ${sellers.join(', ')} sells`,
        );
    }
  }
  return paid;
}

/** Throws PAID_ROUTE_ONLY unless every paid root field is run by a paid call of a route that sells it. */
export function assertPaidFieldsAllowed(
  paidFields: PaidFields,
  operationType: OperationDefinitionNode['operation'],
  rootFieldNames: Iterable<string>,
  paidRoute: string | undefined,
): void {
  for (const name of rootFieldNames) {
    const field = rootCoordinate(operationType, name);
    const routes = paidFields.get(field);
    if (routes === undefined || (paidRoute !== undefined && routes.includes(paidRoute))) continue;
    throw gatewayGraphQLError(
      'PAID_ROUTE_ONLY',
      `${field} runs only through ${routes.join(', ')}, paid with x402.`,
      { field, routes },
    );
  }
}
