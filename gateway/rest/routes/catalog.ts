// GET /consumer/catalog: the live catalog of providers and capabilities, as the spec writes it
// (maturities in lowercase) with the execution object. The catalog subgraph answers in GraphQL's
// enums; this module only reshapes.
import type { CatalogQuery } from '../generated/operations';
import type { RouteDefinition } from '../types';
import { FREE } from '../types';
import { noInput } from './inputs';

type Json = Record<string, unknown>;

function lowerMaturity(value: unknown): unknown {
  return typeof value === 'string' ? value.toLowerCase() : value;
}

/** The consumer catalog: maturities as the spec writes them (lowercase) plus the execution object. */
export function consumerCatalogBody(data: CatalogQuery): Json {
  const { catalog } = data;
  return {
    maturityOrder: catalog.maturityOrder.map(lowerMaturity),
    providers: catalog.providers.map((provider) => ({
      id: provider.id,
      name: provider.name,
      kind: provider.kind,
      maturity: lowerMaturity(provider.maturity),
      executableToday: provider.executableToday,
      capabilities: provider.capabilities.map((capability) => capability.id),
    })),
    capabilities: catalog.capabilities.map((capability) => ({
      id: capability.id,
      providerId: capability.provider.id,
      maturity: lowerMaturity(capability.maturity),
      effectiveMaturity: lowerMaturity(capability.effectiveMaturity),
      movesMoney: capability.movesMoney,
      executable: capability.executable,
      refusalCode: capability.refusalCode,
    })),
    gatedRails: catalog.gatedRails,
    execution: { providersExecutableToday: catalog.execution.providersExecutableToday },
  };
}

export const consumerCatalogRoute: RouteDefinition = {
  method: 'GET',
  path: '/consumer/catalog',
  purpose: 'live catalog of providers and capabilities with maturities and the execution object',
  group: 'consumer',
  auth: 'public',
  price: FREE,
  operation: {
    document: 'catalog',
    operationName: 'Catalog',
    variables: noInput,
    respond: (data) => ({
      status: 200,
      body: consumerCatalogBody(data),
    }),
  },
};
