// The ledger subgraph's queries, mutations and entity fields. Every resolver decides access
// first: lists and lookups through the actor's scope (access.ts), accounts, the trial balance,
// treasury drift and the operator mutations for admins only. Reads go through reads.ts and
// balances.ts, operator mutations through operator/writes.ts.
import {
  Arg,
  Args,
  ArgsType,
  Ctx,
  Field,
  FieldResolver,
  ID,
  Int,
  Mutation,
  Query,
  Resolver,
  Root,
} from 'type-graphql';
import {
  describeActor,
  requireAdmin,
  type ReferenceResolvers,
  type SubgraphContext,
} from '../../kit';
import type { AccountKind, GroupKind } from '../accounts/names';
import { scopeFor, scopeForPolicy } from './access';
import { recordTreasuryTransfer, reverseLedgerGroup } from '../operator/writes';
import { latestTreasuryDrift, listAccounts, periodBalances, trialBalance } from './balances';
import { entriesOfGroups, groupById, groupReversing, listEntries, listGroups } from './reads';
import type {
  AccountView,
  EntryView,
  GroupView,
  LedgerFilterInput,
  LedgerScope,
  Page,
  PeriodBalanceView,
  TreasuryDriftView,
  TrialBalanceView,
} from './views';
import {
  LedgerAccount,
  LedgerAccountConnection,
  LedgerAccountKindEnum,
  LedgerEntry,
  LedgerEntryConnection,
  LedgerFilter,
  LedgerGroup,
  LedgerGroupConnection,
  LedgerGroupKindEnum,
  LedgerPeriodBalance,
  LedgerTreasuryDrift,
  LedgerTreasuryTransfer,
  LedgerTrialBalance,
  PolicyWithLedger,
  SpendIntentWithLedger,
  TreasuryTransferInput,
} from './schema';

/** A group as resolvers pass it on: entries already loaded when the list fetched them in bulk. */
type GroupNode = GroupView & { entries?: EntryView[] };

@ArgsType()
class PageArgs {
  @Field(() => Int, { nullable: true, description: 'Page size, 1 to 200 (default 50).' })
  first?: number;

  @Field({ nullable: true, description: 'The endCursor of the previous page.' })
  after?: string;
}

@ArgsType()
class FilteredPageArgs extends PageArgs {
  @Field(() => LedgerFilter, { nullable: true })
  filter?: LedgerFilter;
}

@ArgsType()
class KindPageArgs extends PageArgs {
  @Field(() => LedgerGroupKindEnum, { nullable: true })
  kind?: GroupKind;
}

@ArgsType()
class AccountPageArgs extends PageArgs {
  @Field(() => LedgerAccountKindEnum, { nullable: true })
  kind?: AccountKind;

  @Field({ nullable: true, description: 'chain|token' })
  asset?: string;
}

function filterOf(filter: LedgerFilter | undefined): LedgerFilterInput {
  return { ...(filter ?? {}) };
}

async function scopeForFilter(
  ctx: SubgraphContext,
  filter: LedgerFilterInput,
): Promise<LedgerScope> {
  return filter.policyId == null ? scopeFor(ctx) : scopeForPolicy(ctx, filter.policyId);
}

/** Loads the entries of a whole page in one query, so `entries` costs no query per group. */
async function withEntries(ctx: SubgraphContext, page: Page<GroupView>): Promise<Page<GroupNode>> {
  const entries = await entriesOfGroups(
    ctx.db,
    page.nodes.map((group) => group.id),
  );
  return {
    ...page,
    nodes: page.nodes.map((group) => ({ ...group, entries: entries.get(group.id) ?? [] })),
  };
}

async function groupsPage(
  ctx: SubgraphContext,
  scope: LedgerScope,
  filter: LedgerFilterInput,
  page: PageArgs,
): Promise<Page<GroupNode>> {
  return withEntries(ctx, await listGroups(ctx.db, scope, filter, page));
}

function auditOf(ctx: SubgraphContext) {
  return { actor: describeActor(requireAdmin(ctx)), correlationId: ctx.correlationId };
}

@Resolver()
export class LedgerQueryResolver {
  @Query(() => LedgerGroupConnection, {
    description: 'Groups, newest first. Admins see all; owners the groups of policies they own.',
  })
  async ledgerGroups(
    @Args() args: FilteredPageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Page<GroupNode>> {
    const filter = filterOf(args.filter);
    return groupsPage(ctx, await scopeForFilter(ctx, filter), filter, args);
  }

  @Query(() => LedgerGroup, {
    nullable: true,
    description: 'Null when it does not exist or is not yours to see.',
  })
  async ledgerGroup(
    @Arg('id', () => ID) id: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<GroupView | null> {
    return groupById(ctx.db, await scopeFor(ctx), id);
  }

  @Query(() => LedgerEntryConnection, {
    description: 'Entries, newest first, with the same visibility as their groups.',
  })
  async ledgerEntries(
    @Args() args: FilteredPageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Page<EntryView>> {
    const filter = filterOf(args.filter);
    return listEntries(ctx.db, await scopeForFilter(ctx, filter), filter, args);
  }

  @Query(() => [LedgerPeriodBalance], {
    description:
      'Debits, credits and net per asset and account kind over the entries the filter selects (from/to for the period), with the same visibility as ledgerEntries.',
  })
  async ledgerBalances(
    @Arg('filter', () => LedgerFilter, { nullable: true }) filter: LedgerFilter | undefined,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PeriodBalanceView[]> {
    const input = filterOf(filter);
    return periodBalances(ctx.db, await scopeForFilter(ctx, input), input);
  }

  @Query(() => LedgerAccountConnection, {
    description: 'Admin only. Accounts with balances, by account key.',
  })
  async ledgerAccounts(
    @Args() args: AccountPageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Page<AccountView>> {
    requireAdmin(ctx);
    return listAccounts(ctx.db, { kind: args.kind, asset: args.asset }, args);
  }

  @Query(() => LedgerAccount, { nullable: true, description: 'Admin only.' })
  async ledgerAccount(
    @Arg('key', () => ID) key: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<AccountView | null> {
    requireAdmin(ctx);
    return (await listAccounts(ctx.db, { key }, { first: 1 })).nodes[0] ?? null;
  }

  @Query(() => [LedgerTrialBalance], {
    description: 'Admin only. One line per asset and rail; every netAtomic is 0.',
  })
  async trialBalance(@Ctx() ctx: SubgraphContext): Promise<TrialBalanceView[]> {
    requireAdmin(ctx);
    return trialBalance(ctx.db);
  }

  @Query(() => [LedgerTreasuryDrift], {
    description: 'Admin only. The latest snapshot per asset: on-chain float vs ledger TREASURY.',
  })
  async treasuryDrift(@Ctx() ctx: SubgraphContext): Promise<TreasuryDriftView[]> {
    requireAdmin(ctx);
    return latestTreasuryDrift(ctx.db);
  }

  @Mutation(() => LedgerTreasuryTransfer, {
    description: 'Admin only, audited. Records a float replenishment as a TREASURY_TRANSFER pair.',
  })
  async recordTreasuryTransfer(
    @Arg('input', () => TreasuryTransferInput) input: TreasuryTransferInput,
    @Ctx() ctx: SubgraphContext,
  ): Promise<{ sourceGroup: GroupView; destinationGroup: GroupView }> {
    const groups = await recordTreasuryTransfer(ctx.db, auditOf(ctx), input);
    const [sourceGroup, destinationGroup] = await Promise.all([
      groupById(ctx.db, { all: true }, groups.sourceGroupId),
      groupById(ctx.db, { all: true }, groups.destinationGroupId),
    ]);
    if (sourceGroup === null || destinationGroup === null)
      throw new Error('a posted treasury transfer group is missing');
    return { sourceGroup, destinationGroup };
  }

  @Mutation(() => LedgerGroup, {
    description:
      'Admin only, audited. Posts the REVERSAL of a group (at most once) and returns it.',
  })
  async reverseLedgerGroup(
    @Arg('groupId', () => ID) groupId: string,
    @Arg('reason', { description: '1 to 500 characters, kept as the reversal’s memo.' })
    reason: string,
    @Arg('idempotencyKey', { description: 'Retrying with the same key returns the same reversal.' })
    idempotencyKey: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<GroupView> {
    const reversalId = await reverseLedgerGroup(ctx.db, auditOf(ctx), {
      groupId,
      reason,
      idempotencyKey,
    });
    const reversal = await groupById(ctx.db, { all: true }, reversalId);
    if (reversal === null) throw new Error(`reversal ${reversalId} is missing after it was posted`);
    return reversal;
  }
}

@Resolver(() => LedgerGroup)
export class LedgerGroupResolver {
  @FieldResolver(() => [LedgerEntry])
  async entries(@Root() group: GroupNode, @Ctx() ctx: SubgraphContext): Promise<EntryView[]> {
    return group.entries ?? (await entriesOfGroups(ctx.db, [group.id])).get(group.id) ?? [];
  }

  @FieldResolver(() => LedgerGroup, {
    nullable: true,
    description: 'For a REVERSAL: the group it reverses.',
  })
  async reverses(@Root() group: GroupNode, @Ctx() ctx: SubgraphContext): Promise<GroupView | null> {
    return group.reverses === null ? null : groupById(ctx.db, await scopeFor(ctx), group.reverses);
  }

  @FieldResolver(() => LedgerGroup, {
    nullable: true,
    description: 'The REVERSAL of this group, if it was reversed.',
  })
  async reversedBy(
    @Root() group: GroupNode,
    @Ctx() ctx: SubgraphContext,
  ): Promise<GroupView | null> {
    return groupReversing(ctx.db, await scopeFor(ctx), group.id);
  }

  @FieldResolver(() => String, {
    nullable: true,
    description: 'Admin only (null for others): the key the poster chose.',
  })
  idempotencyKey(@Root() group: GroupNode, @Ctx() ctx: SubgraphContext): string | null {
    return ctx.actor.kind === 'admin' ? group.idempotencyKey : null;
  }
}

@Resolver(() => PolicyWithLedger)
export class PolicyLedgerResolver {
  @FieldResolver(() => LedgerGroupConnection, {
    description: 'The policy’s money, newest first: its owner and admins only.',
  })
  async ledgerGroups(
    @Root() policy: PolicyWithLedger,
    @Args() args: KindPageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Page<GroupNode>> {
    const filter: LedgerFilterInput = { policyId: policy.id, kind: args.kind };
    return groupsPage(ctx, await scopeForPolicy(ctx, policy.id), filter, args);
  }
}

@Resolver(() => SpendIntentWithLedger)
export class SpendIntentLedgerResolver {
  @FieldResolver(() => LedgerGroupConnection, {
    description: 'The groups posted for this intent that the caller may see.',
  })
  async ledgerGroups(
    @Root() intent: SpendIntentWithLedger,
    @Args() args: KindPageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<Page<GroupNode>> {
    return groupsPage(
      ctx,
      await scopeFor(ctx),
      { intentRef: intent.intentHash, kind: args.kind },
      args,
    );
  }
}

export const ledgerReferenceResolvers: ReferenceResolvers = {
  LedgerGroup: {
    async __resolveReference(reference, ctx) {
      return groupById(ctx.db, await scopeFor(ctx), String(reference.id));
    },
  },
  LedgerAccount: {
    async __resolveReference(reference, ctx) {
      requireAdmin(ctx);
      return (
        (await listAccounts(ctx.db, { key: String(reference.key) }, { first: 1 })).nodes[0] ?? null
      );
    },
  },
  Policy: {
    __resolveReference(reference) {
      return { id: String(reference.id) };
    },
  },
  SpendIntent: {
    __resolveReference(reference) {
      return { intentHash: String(reference.intentHash) };
    },
  },
};
