// Where each purchasable capability is bought from its merchant: the HTTP method and path under the
// provider's base URL (the provider registry, ctx.consumer.providers), the query its params become,
// the params it accepts, and a short summary for the SpendIntent's item description. One row per
// capability the service can quote; a capability without a row cannot be bought (the catalog gate
// refuses it first: gated or not verified).
import { z } from 'zod';
import { isDomainName } from '../../../../core/validation/domainName';
import { requiredOr } from '../../../../core/validation/zodDetails';

export { isDomainName };

export interface MerchantRoute {
  readonly method: 'GET';
  readonly path: string;
  /** The params a request of this capability must carry (strict: no other keys). */
  readonly params: z.ZodType<Record<string, string>>;
  /** The merchant's query parameters from valid params. */
  query(params: Readonly<Record<string, string>>): Record<string, string>;
  /** A few words naming what is bought, e.g. the domain. */
  summary(params: Readonly<Record<string, string>>): string;
}

const domainParams = z.strictObject({
  domain: z
    .string(requiredOr('must be a domain name such as example.test'))
    .refine(isDomainName, { error: 'must be a domain name such as example.test' })
    .transform((domain) => domain.toLowerCase()),
});

export const MERCHANT_ROUTES: Readonly<Record<string, MerchantRoute>> = {
  'domains.check': {
    method: 'GET',
    path: '/domains/check',
    params: domainParams,
    query: (params) => ({ domain: params.domain! }),
    summary: (params) => params.domain!,
  },
};

export function merchantRouteOf(capability: string): MerchantRoute | null {
  return Object.hasOwn(MERCHANT_ROUTES, capability) ? MERCHANT_ROUTES[capability]! : null;
}

/** The full paid URL of one purchase: base URL (no trailing slash) + path + query. */
export function merchantUrl(
  baseUrl: string,
  route: MerchantRoute,
  params: Readonly<Record<string, string>>,
): string {
  const url = new URL(route.path, `${baseUrl.replace(/\/+$/, '')}/`);
  for (const [name, value] of Object.entries(route.query(params)))
    url.searchParams.set(name, value);
  return url.toString();
}
