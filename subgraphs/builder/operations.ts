// The launch pack's GraphQL operations, each answering the REST body of its route verbatim
// (JSONObject). Inputs are checked here with the same field-level validators the gateway runs
// before any 402, so GraphQL and REST callers get the same REQUEST_INVALID list. suggestNames and
// brandPack are sold by priced REST routes: they run only as the gateway's signed paid call.
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Ctx, Int, Mutation, Query, Resolver } from 'type-graphql';
import {
  builderInputError,
  rankOptions,
  seoTips,
  validateBrandPackInput,
  validateRankOptionsInput,
  validateSeoTipsInput,
  validateSuggestNamesInput,
  type BuilderValidation,
} from '../../core/builder';
import { requirePaidCall, type SubgraphContext } from '../kit';
import { checkDomains } from './domains/check';
import { validateCheckDomainsInput } from './domains/request';
import { suggestNamesFor } from './names/suggest';
import { brandPack } from './pack/brandPack';
import { builderServicesOf, rdapOf } from './services';

type Json = Record<string, unknown>;

function valid<T>(validation: BuilderValidation<T>): T {
  if (!validation.ok) throw builderInputError(validation.errors);
  return validation.value;
}

/** The arguments as a body: null and absent both mean "not given" to the validators. */
function bodyOf(args: Record<string, unknown>): Json {
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value != null));
}

@Resolver()
export class BuilderOperationsResolver {
  @Mutation(() => GraphQLJSONObject, {
    description:
      'suggest_names: {idea, style, count, source, model | fallbackReason, names}; source says whether the language model ' +
      'or the fallback generator answered. Runs only through the paid REST route POST /builder/suggest_names (PAID_ROUTE_ONLY otherwise).',
  })
  async suggestNames(
    @Arg('idea', () => String, { nullable: true }) idea: string | null,
    @Arg('count', () => Int, { nullable: true }) count: number | null,
    @Arg('style', () => String, { nullable: true }) style: string | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    requirePaidCall(ctx, 'suggestNames');
    const input = valid(validateSuggestNamesInput(bodyOf({ idea, count, style })));
    return { ...(await suggestNamesFor(builderServicesOf(ctx), input)) };
  }

  @Query(() => GraphQLJSONObject, {
    description:
      'check_domains: {results: [{domain, name, status AVAILABLE | TAKEN | UNKNOWN, registry, checkedAt, cached, reason?, detail}], note}, ' +
      'live over RDAP, at most 50 domains; give domains, or names with tlds (default: the deployment’s). Not a purchase or reservation.',
  })
  async checkDomains(
    @Arg('names', () => [String], { nullable: true }) names: string[] | null,
    @Arg('domains', () => [String], { nullable: true }) domains: string[] | null,
    @Arg('tlds', () => [String], { nullable: true }) tlds: string[] | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    const services = builderServicesOf(ctx);
    const input = valid(
      validateCheckDomainsInput(bodyOf({ names, domains, tlds }), services.defaultTlds),
    );
    return { ...(await checkDomains(rdapOf(ctx), input.domains, () => ctx.now())) };
  }

  @Query(() => GraphQLJSONObject, {
    description:
      'rank_options: {ranked: [{rank, name, score, parts {length, charset, pronounceability, availability}, availableDomains}]} (docs/builder.md "Ranking"); ' +
      'with domains ([{domain, status}], e.g. check_domains results) availability is scored and availableDomains lists the AVAILABLE ones.',
  })
  rankOptions(
    @Arg('names', () => [String], { nullable: true }) names: string[] | null,
    @Arg('domains', () => [GraphQLJSONObject], { nullable: true }) domains: Json[] | null,
  ): Json {
    const input = valid(validateRankOptionsInput(bodyOf({ names, domains })));
    return { ranked: rankOptions(input.names, input.availability) };
  }

  @Query(() => GraphQLJSONObject, {
    description:
      'seo_tips: the deterministic launch checklist for a name {name, title, metaDescription, slug, keywords, handles, checklist}.',
  })
  seoTips(
    @Arg('name', () => String, { nullable: true }) name: string | null,
    @Arg('idea', () => String, { nullable: true }) idea: string | null,
  ): Json {
    const input = valid(validateSeoTipsInput(bodyOf({ name, idea })));
    return { ...seoTips(input.name, input.idea) };
  }

  @Mutation(() => GraphQLJSONObject, {
    description:
      'brand_pack: {idea, suggestions, domains, picks, seoTips}: names, their domains checked live over RDAP, the best picks ranked, ' +
      'each with availableDomains (only domains the check found AVAILABLE), and the best pick’s SEO checklist. ' +
      'Runs only through the paid REST route POST /builder/brand_pack (PAID_ROUTE_ONLY otherwise).',
  })
  async brandPack(
    @Arg('idea', () => String, { nullable: true }) idea: string | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Json> {
    requirePaidCall(ctx, 'brandPack');
    const input = valid(validateBrandPackInput(bodyOf({ idea })));
    return {
      ...(await brandPack(builderServicesOf(ctx), rdapOf(ctx), input.idea, () => ctx.now())),
    };
  }
}
