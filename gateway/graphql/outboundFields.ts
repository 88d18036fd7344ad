// Which GraphQL root fields call a third party (those of the REST routes with the outbound bucket,
// e.g. checkDomains asks RDAP registries), and how many times an operation selects them, aliases
// and fragments included. On POST /graphql such an operation takes a token from the caller's
// outbound bucket, as the REST route does, and may select one of them once, so neither aliases
// nor the GraphQL endpoint multiply what one caller can make the service ask a registry.
import {
  Kind,
  type DocumentNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { RouteDefinition } from '../rest/types';
import { rootCoordinate, routeRootFields } from './paidFields';

/** `Query.checkDomains` and the like. */
export type OutboundFields = ReadonlySet<string>;

export function outboundFieldsOf(
  routes: readonly RouteDefinition[],
  documents: ReadonlyMap<string, string>,
): OutboundFields {
  return new Set(
    routes
      .filter((route) => route.rateLimit === 'outbound')
      .flatMap((route) => routeRootFields(route, documents)),
  );
}

/** Root selections of outbound fields in `operation`, each alias and fragment copy counted. */
export function outboundSelections(
  document: DocumentNode,
  operation: OperationDefinitionNode,
  outbound: OutboundFields,
): number {
  const count = (selectionSet: SelectionSetNode, seen: ReadonlySet<string>): number => {
    let total = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (outbound.has(rootCoordinate(operation.operation, selection.name.value))) total += 1;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        total += count(selection.selectionSet, seen);
      } else if (!seen.has(selection.name.value)) {
        const fragment = document.definitions.find(
          (definition) =>
            definition.kind === Kind.FRAGMENT_DEFINITION &&
            definition.name.value === selection.name.value,
        );
        if (fragment?.kind === Kind.FRAGMENT_DEFINITION)
          total += count(fragment.selectionSet, new Set([...seen, selection.name.value]));
      }
    }
    return total;
  };
  return count(operation.selectionSet, new Set());
}
