// Turns the catalog's rows into what GraphQL serves: each provider and capability with its
// derived standing (effective maturity, refusal, executable) and links both ways. The whole
// catalog is read once per request and shared by every resolver of that request.
import { type ErrorCode } from '../../core/errors';
import { dataSourceOf, type SubgraphContext } from '../kit';
import {
  effectiveMaturity,
  isExecutable,
  MATURITY_ORDER,
  type MaturityLevel,
  providersExecutableToday,
  refusalCode,
} from './maturity';
import { type CatalogRows, readCatalog } from './reads';

export interface ProviderView {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly maturity: MaturityLevel;
  readonly updatedAt: Date;
  readonly executableToday: boolean;
  readonly capabilities: CapabilityView[];
}

export interface CapabilityView {
  readonly id: string;
  readonly provider: ProviderView;
  readonly maturity: MaturityLevel;
  readonly effectiveMaturity: MaturityLevel;
  readonly movesMoney: boolean;
  readonly gateCode: ErrorCode | null;
  readonly refusalCode: ErrorCode | null;
  readonly executable: boolean;
  readonly updatedAt: Date;
}

export interface CatalogView {
  readonly providers: readonly ProviderView[];
  readonly capabilities: readonly CapabilityView[];
  readonly gatedRails: ReadonlyArray<{ readonly rail: string; readonly refusalCode: ErrorCode }>;
  readonly execution: { readonly providersExecutableToday: readonly string[] };
  readonly maturityOrder: readonly MaturityLevel[];
  readonly providerById: ReadonlyMap<string, ProviderView>;
  readonly capabilityById: ReadonlyMap<string, CapabilityView>;
}

export function buildCatalogView(rows: CatalogRows): CatalogView {
  const executableProviders = providersExecutableToday(rows.providers, rows.capabilities);
  const providerById = new Map<string, ProviderView>();
  for (const row of rows.providers) {
    providerById.set(row.id, {
      ...row,
      executableToday: executableProviders.includes(row.id),
      capabilities: [],
    });
  }
  const capabilityById = new Map<string, CapabilityView>();
  for (const row of rows.capabilities) {
    const provider = providerById.get(row.providerId);
    if (provider === undefined)
      throw new Error(
        `catalog data: capability ${row.id} names unknown provider ${row.providerId}`,
      );
    const standing = {
      providerMaturity: provider.maturity,
      maturity: row.maturity,
      gateCode: row.gateCode,
    };
    const capability: CapabilityView = {
      id: row.id,
      provider,
      maturity: row.maturity,
      effectiveMaturity: effectiveMaturity(provider.maturity, row.maturity),
      movesMoney: row.movesMoney,
      gateCode: row.gateCode,
      refusalCode: refusalCode(standing),
      executable: isExecutable(standing),
      updatedAt: row.updatedAt,
    };
    provider.capabilities.push(capability);
    capabilityById.set(capability.id, capability);
  }
  return {
    providers: [...providerById.values()],
    capabilities: [...capabilityById.values()],
    gatedRails: rows.gatedRails,
    execution: { providersExecutableToday: executableProviders },
    maturityOrder: MATURITY_ORDER,
    providerById,
    capabilityById,
  };
}

const viewsByRequest = new WeakMap<SubgraphContext, Promise<CatalogView>>();

/**
 * The catalog as this request sees it: read on first use through the process's TypeORM DataSource,
 * then shared by every resolver.
 */
export function catalogFor(ctx: SubgraphContext): Promise<CatalogView> {
  let view = viewsByRequest.get(ctx);
  if (view === undefined) {
    view = readCatalog(dataSourceOf(ctx)).then(buildCatalogView);
    viewsByRequest.set(ctx, view);
  }
  return view;
}

/** Re-reads after this request changed the catalog, so its answer shows the change. */
export function refreshCatalog(ctx: SubgraphContext): Promise<CatalogView> {
  viewsByRequest.delete(ctx);
  return catalogFor(ctx);
}
