// The builder (launch pack) routes, built from core/builder's BUILDER_ROUTES (the list
// Capability.builderTools also reads): each body is checked with the builder's field-level
// validators before anything runs, so a bad request is a 400 with the field list and, on the priced
// routes, never a 402 or a charge. Routes that ask a registry take the tighter outbound bucket.
import {
  BUILDER_ROUTES,
  builderInputError,
  validateBrandPackInput,
  validateRankOptionsInput,
  validateSeoTipsInput,
  validateSuggestNamesInput,
  type BuilderOperation,
  type BuilderRoute,
  type BuilderValidation,
} from '../../../core/builder';
import { validateCheckDomainsInput } from '../../../subgraphs/builder';
import {
  FREE,
  type OperationBinding,
  type OperationBindingOf,
  type RestInput,
  type RouteDefinition,
  usdt0,
} from '../types';

function valid<T>(validation: BuilderValidation<T>): T {
  if (!validation.ok) throw builderInputError(validation.errors);
  return validation.value;
}

/** The request's GraphQL variables, after the builder's validators accepted the body. */
const VARIABLES: Readonly<Record<BuilderOperation, (body: unknown) => Record<string, unknown>>> = {
  suggestNames: (body) => ({ ...valid(validateSuggestNamesInput(body)) }),
  // The deployment's default TLDs are the subgraph's to know; it checks names × TLDs again.
  checkDomains: (body) => {
    valid(validateCheckDomainsInput(body, null));
    const { names, domains, tlds } = body as Record<string, unknown>;
    return { names: names ?? null, domains: domains ?? null, tlds: tlds ?? null };
  },
  rankOptions: (body) => {
    valid(validateRankOptionsInput(body));
    const { names, domains } = body as Record<string, unknown>;
    return { names, domains: domains ?? null };
  },
  seoTips: (body) => {
    const { name, idea } = valid(validateSeoTipsInput(body));
    return { name, idea: idea ?? null };
  },
  brandPack: (body) => ({ idea: valid(validateBrandPackInput(body)).idea }),
};

/** Persisted document names are the operation names with a capital (suggestNames → SuggestNames). */
function operationOf(route: BuilderRoute): OperationBinding {
  const { operation } = route;
  const binding: OperationBindingOf<Capitalize<BuilderOperation>> = {
    document: operation,
    operationName: (operation[0].toUpperCase() +
      operation.slice(1)) as Capitalize<BuilderOperation>,
    variables: (input: RestInput) => VARIABLES[operation](input.body ?? {}),
    // Each builder document selects exactly its one root field, a JSONObject.
    respond: (data) => ({
      status: 200,
      body: (data as Readonly<Record<BuilderOperation, Record<string, unknown>>>)[operation],
    }),
  };
  return binding as OperationBinding;
}

export const builderRoutes: readonly RouteDefinition[] = BUILDER_ROUTES.map((route) => ({
  method: route.method,
  path: route.path,
  purpose: route.purpose,
  group: 'builder',
  auth: 'public',
  price: route.priceUsdt0 === null ? FREE : usdt0(route.priceUsdt0),
  ...(route.outbound ? { rateLimit: 'outbound' as const } : {}),
  operation: operationOf(route),
}));
