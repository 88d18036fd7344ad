// Maturity arithmetic of the catalog, as pure functions: the order of levels, effective maturity
// (the minimum of provider and capability), the refusal a capability answers with, and which
// providers can execute today. No I/O; the resolvers and the execution gates share these rules.
import type { ErrorCode } from '../../core/errors';

/** Lowest first: experimental < sandbox < verified. Only verified executes. */
export const MATURITY_ORDER = ['experimental', 'sandbox', 'verified'] as const;
export type MaturityLevel = (typeof MATURITY_ORDER)[number];

/** GraphQL enum names to the stored words (`VERIFIED` is stored as `verified`). */
export const MATURITY = {
  EXPERIMENTAL: 'experimental',
  SANDBOX: 'sandbox',
  VERIFIED: 'verified',
} as const;

export function isMaturityLevel(value: unknown): value is MaturityLevel {
  return typeof value === 'string' && (MATURITY_ORDER as readonly string[]).includes(value);
}

export function maturityRank(level: MaturityLevel): number {
  return MATURITY_ORDER.indexOf(level);
}

/** Promoting a provider never raises a capability above the capability's own maturity. */
export function effectiveMaturity(
  provider: MaturityLevel,
  capability: MaturityLevel,
): MaturityLevel {
  return maturityRank(provider) <= maturityRank(capability) ? provider : capability;
}

export interface CapabilityStanding {
  readonly providerMaturity: MaturityLevel;
  readonly maturity: MaturityLevel;
  /** The named refusal of a gated capability, or null when it is not gated. */
  readonly gateCode: ErrorCode | null;
}

/** A gate names the refusal first; otherwise anything below verified is CAPABILITY_NOT_VERIFIED. */
export function refusalCode(standing: CapabilityStanding): ErrorCode | null {
  if (standing.gateCode !== null) return standing.gateCode;
  if (effectiveMaturity(standing.providerMaturity, standing.maturity) !== 'verified')
    return 'CAPABILITY_NOT_VERIFIED';
  return null;
}

export function isExecutable(standing: CapabilityStanding): boolean {
  return refusalCode(standing) === null;
}

/** Providers with at least one verified, ungated capability, sorted by id. */
export function providersExecutableToday(
  providers: ReadonlyArray<{ readonly id: string; readonly maturity: MaturityLevel }>,
  capabilities: ReadonlyArray<{
    readonly providerId: string;
    readonly maturity: MaturityLevel;
    readonly gateCode: ErrorCode | null;
  }>,
): string[] {
  const maturityById = new Map(providers.map((provider) => [provider.id, provider.maturity]));
  const executable = new Set<string>();
  for (const capability of capabilities) {
    const providerMaturity = maturityById.get(capability.providerId);
    if (providerMaturity === undefined)
      throw new Error(`capability names unknown provider ${capability.providerId}`);
    if (
      isExecutable({
        providerMaturity,
        maturity: capability.maturity,
        gateCode: capability.gateCode,
      })
    ) {
      executable.add(capability.providerId);
    }
  }
  return [...executable].sort();
}
