// brand_pack: the launch pack in one call: names (model or fallback), their domains under the
// default TLDs checked live over RDAP, the names ranked with those results, and the SEO checklist
// of the best pick. A pick's availableDomains lists only what the check found AVAILABLE; at most
// MAX_DOMAINS_PER_CHECK domains are asked, as for check_domains.
import { rankOptions, seoTips, type DomainStatus, type RankedOption } from '../../../core/builder';
import type { RdapClient } from '../../../platform/rdap';
import type { BuilderServices } from '../../kit';
import { checkDomains, type DomainCheckResult } from '../domains/check';
import { MAX_DOMAINS_PER_CHECK } from '../domains/request';
import { suggestNamesFor, type SuggestNamesAnswer } from '../names/suggest';

export const PACK_NAME_COUNT = 10;
export const PACK_PICKS = 5;

export interface BrandPack {
  readonly idea: string;
  readonly suggestions: Omit<SuggestNamesAnswer, 'idea'>;
  readonly domains: DomainCheckResult;
  /** The best PACK_PICKS of the checked names, each with its AVAILABLE domains only. */
  readonly picks: readonly RankedOption[];
  readonly seoTips: ReturnType<typeof seoTips>;
}

export async function brandPack(
  services: BuilderServices,
  rdap: RdapClient | null,
  idea: string,
  now: () => Date,
): Promise<BrandPack> {
  const { idea: _asked, ...suggestions } = await suggestNamesFor(services, {
    idea,
    count: PACK_NAME_COUNT,
    style: 'brandable',
  });
  const tlds = services.defaultTlds.slice(0, MAX_DOMAINS_PER_CHECK);
  const names = suggestions.names.slice(0, Math.floor(MAX_DOMAINS_PER_CHECK / tlds.length));
  const domains = await checkDomains(
    rdap,
    names.flatMap((name) => tlds.map((tld) => ({ domain: `${name}.${tld}`, name }))),
    now,
  );
  const availability = new Map<string, DomainStatus[]>();
  for (const result of domains.results) {
    if (result.name === null) continue;
    const statuses = availability.get(result.name) ?? [];
    statuses.push({ domain: result.domain, status: result.status });
    availability.set(result.name, statuses);
  }
  const picks = rankOptions(names, availability).slice(0, PACK_PICKS);
  return { idea, suggestions, domains, picks, seoTips: seoTips(picks[0].name, idea) };
}
