// Catalog queries (public, anonymous allowed) and the admin-only maturity mutations. A change
// is locked, applied and audited in one transaction; unknown ids answer PROVIDER_NOT_FOUND or
// CAPABILITY_NOT_FOUND; the answer is read after commit, so it shows the new standing.
import { Arg, Args, ArgsType, Ctx, Field, ID, Mutation, Query, Resolver } from 'type-graphql';
import { AppError } from '../../core/errors';
import { describeActor, requireAdmin, type SubgraphContext } from '../kit';
import { MATURITY, type MaturityLevel } from './maturity';
import { Capability, Catalog, Provider } from './schema';
import {
  type CapabilityView,
  type CatalogView,
  catalogFor,
  type ProviderView,
  refreshCatalog,
} from './views';
import { MAX_REASON_LENGTH, type MaturitySubject, setMaturity } from './writes';

function validReason(reason: string): string {
  const trimmed = reason.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_REASON_LENGTH) {
    throw new AppError('REQUEST_INVALID', undefined, [
      { field: 'reason', reason: `must be 1 to ${MAX_REASON_LENGTH} characters after trimming` },
    ]);
  }
  return trimmed;
}

async function changeMaturity(
  ctx: SubgraphContext,
  subject: MaturitySubject,
  id: string,
  maturity: MaturityLevel,
  reason: string,
): Promise<CatalogView> {
  const admin = requireAdmin(ctx);
  const change = {
    subject,
    id,
    maturity,
    reason: validReason(reason),
    actor: describeActor(admin),
    at: ctx.now(),
  };
  const previous = await setMaturity(ctx.db, change);
  if (previous === null)
    throw new AppError(subject === 'provider' ? 'PROVIDER_NOT_FOUND' : 'CAPABILITY_NOT_FOUND');
  return refreshCatalog(ctx);
}

@ArgsType()
class SetMaturityArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => MATURITY)
  maturity!: MaturityLevel;

  @Field({ description: 'Why, for the audit trail: 1 to 500 characters.' })
  reason!: string;
}

@Resolver()
export class CatalogResolver {
  @Query(() => Catalog, {
    description: 'The live catalog with maturities and the execution object. Public.',
  })
  async catalog(@Ctx() ctx: SubgraphContext): Promise<CatalogView> {
    return catalogFor(ctx);
  }

  @Query(() => Provider, { nullable: true })
  async provider(
    @Arg('id', () => ID) id: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ProviderView | null> {
    return (await catalogFor(ctx)).providerById.get(id) ?? null;
  }

  @Query(() => Capability, {
    nullable: true,
    description: 'Exact id; a family entry is asked for by its own id, e.g. "shop.*".',
  })
  async capability(
    @Arg('id', () => ID) id: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<CapabilityView | null> {
    return (await catalogFor(ctx)).capabilityById.get(id) ?? null;
  }

  @Mutation(() => Provider, {
    description: 'Admin only. Audited; changes no capability’s own maturity.',
  })
  async setProviderMaturity(
    @Args() { id, maturity, reason }: SetMaturityArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ProviderView> {
    const view = await changeMaturity(ctx, 'provider', id, maturity, reason);
    const provider = view.providerById.get(id);
    if (provider === undefined)
      throw new Error(`provider ${id} vanished after its maturity changed`);
    return provider;
  }

  @Mutation(() => Capability, { description: 'Admin only. Audited.' })
  async setCapabilityMaturity(
    @Args() { id, maturity, reason }: SetMaturityArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<CapabilityView> {
    const view = await changeMaturity(ctx, 'capability', id, maturity, reason);
    const capability = view.capabilityById.get(id);
    if (capability === undefined)
      throw new Error(`capability ${id} vanished after its maturity changed`);
    return capability;
  }
}
