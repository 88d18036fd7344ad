// The ledger's GraphQL types as type-graphql classes. Amounts are signed decimal strings of
// atomic units (+ debit, - credit). Policy and SpendIntent are other subgraphs' entities, known
// here only by their keys, so a dashboard reads an intent with its money in one query.
import { Directive, Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { ACCOUNT_KINDS, type AccountKind, GROUP_KINDS, type GroupKind } from '../accounts/names';

export const LedgerAccountKindEnum = Object.fromEntries(
  ACCOUNT_KINDS.map((kind) => [kind, kind]),
) as {
  [K in AccountKind]: K;
};
export const LedgerGroupKindEnum = Object.fromEntries(GROUP_KINDS.map((kind) => [kind, kind])) as {
  [K in GroupKind]: K;
};

registerEnumType(LedgerAccountKindEnum, {
  name: 'LedgerAccountKind',
  description: 'What an account holds; see docs/ledger.md.',
});
registerEnumType(LedgerGroupKindEnum, {
  name: 'LedgerGroupKind',
  description: 'Why a group of entries was posted.',
});

@ObjectType({
  description:
    'One token on one chain (one rail). Every group and account holds exactly one asset.',
})
export class LedgerAsset {
  @Field(() => ID, { description: 'chain|token, e.g. eip155:196|0x…' })
  id!: string;

  @Field({ description: 'CAIP-2 chain id, e.g. eip155:196.' })
  chain!: string;

  @Field()
  token!: string;

  @Field()
  symbol!: string;

  @Field(() => Int)
  decimals!: number;
}

@Directive('@key(fields: "key")')
@ObjectType({ description: 'A ledger account with its balance. Admin only.' })
export class LedgerAccount {
  @Field(() => ID, {
    description: 'The account id, KIND:chain|token:ref, e.g. TREASURY:eip155:196|0x…:float.',
  })
  key!: string;

  @Field(() => LedgerAccountKindEnum)
  kind!: AccountKind;

  @Field(() => LedgerAsset)
  asset!: LedgerAsset;

  @Field()
  ref!: string;

  @Field({ description: 'Sum of its entries: + debit, - credit, atomic units.' })
  balanceAtomic!: string;

  @Field(() => Int)
  entryCount!: number;

  @Field()
  createdAt!: Date;
}

@ObjectType({ description: 'One line of a group: an amount on one account.' })
export class LedgerEntry {
  @Field(() => ID, { description: '<groupId>:<entryNo>' })
  id!: string;

  @Field(() => ID)
  groupId!: string;

  @Field(() => Int, { description: 'Position in the group, 1-based.' })
  entryNo!: number;

  @Field(() => LedgerGroupKindEnum)
  groupKind!: GroupKind;

  @Field({ description: 'The account id, KIND:chain|token:ref.' })
  accountKey!: string;

  @Field(() => LedgerAccountKindEnum)
  accountKind!: AccountKind;

  @Field(() => LedgerAsset)
  asset!: LedgerAsset;

  @Field({ description: 'Signed atomic units: + debit, - credit; never 0.' })
  amountAtomic!: string;

  @Field({ description: 'When its group was posted.' })
  createdAt!: Date;
}

@Directive('@key(fields: "id")')
@ObjectType({
  description: 'A balanced, single-asset set of entries, posted once and never changed.',
})
export class LedgerGroup {
  @Field(() => ID, { description: 'lg_ + 24 hex.' })
  id!: string;

  @Field(() => LedgerGroupKindEnum)
  kind!: GroupKind;

  @Field(() => LedgerAsset)
  asset!: LedgerAsset;

  @Field(() => String, {
    nullable: true,
    description: 'The intent the money belongs to: ci_… or an intentHash.',
  })
  intentRef!: string | null;

  @Field(() => ID, { nullable: true })
  policyId!: string | null;

  @Field(() => String, { nullable: true, description: 'Free text; for a REVERSAL, the reason.' })
  memo!: string | null;

  @Field()
  createdAt!: Date;

  @Field(() => [LedgerEntry])
  entries!: LedgerEntry[];
}

@ObjectType()
export class LedgerPageInfo {
  @Field(() => String, {
    nullable: true,
    description: 'Opaque; pass as `after` for the next page.',
  })
  endCursor!: string | null;

  @Field()
  hasNextPage!: boolean;
}

@ObjectType({
  description:
    'Newest first. Stable while rows are added: a row that existed when paging began appears exactly once.',
})
export class LedgerGroupConnection {
  @Field(() => [LedgerGroup])
  nodes!: LedgerGroup[];

  @Field(() => LedgerPageInfo)
  pageInfo!: LedgerPageInfo;
}

@ObjectType({
  description:
    'Newest first. Stable while rows are added: a row that existed when paging began appears exactly once.',
})
export class LedgerEntryConnection {
  @Field(() => [LedgerEntry])
  nodes!: LedgerEntry[];

  @Field(() => LedgerPageInfo)
  pageInfo!: LedgerPageInfo;
}

@ObjectType({ description: 'Ordered by account key.' })
export class LedgerAccountConnection {
  @Field(() => [LedgerAccount])
  nodes!: LedgerAccount[];

  @Field(() => LedgerPageInfo)
  pageInfo!: LedgerPageInfo;
}

@ObjectType()
export class LedgerKindBalance {
  @Field(() => LedgerAccountKindEnum)
  kind!: AccountKind;

  @Field()
  balanceAtomic!: string;
}

@ObjectType({
  description:
    'What the entries of one account kind in one asset add up to over a period (the filter’s from/to).',
})
export class LedgerPeriodBalance {
  @Field(() => LedgerAsset)
  asset!: LedgerAsset;

  @Field(() => LedgerAccountKindEnum)
  kind!: AccountKind;

  @Field({ description: 'Sum of the positive entries.' })
  debitsAtomic!: string;

  @Field({ description: 'Sum of the negative entries (0 or negative).' })
  creditsAtomic!: string;

  @Field({ description: 'debits + credits: the change of the kind’s balance over the period.' })
  netAtomic!: string;

  @Field(() => Int)
  entryCount!: number;
}

@ObjectType({
  description: 'One asset on one rail. netAtomic is always 0; anything else is a defect.',
})
export class LedgerTrialBalance {
  @Field(() => LedgerAsset)
  asset!: LedgerAsset;

  @Field()
  debitsAtomic!: string;

  @Field()
  creditsAtomic!: string;

  @Field()
  netAtomic!: string;

  @Field()
  balanced!: boolean;

  @Field(() => Int)
  entryCount!: number;

  @Field(() => [LedgerKindBalance])
  byKind!: LedgerKindBalance[];
}

@ObjectType({
  description:
    'The latest on-chain float next to the ledger TREASURY balance of its asset. Reported, never corrected.',
})
export class LedgerTreasuryDrift {
  @Field(() => LedgerAsset)
  asset!: LedgerAsset;

  @Field()
  treasuryAddress!: string;

  @Field()
  onchainBalanceAtomic!: string;

  @Field()
  ledgerBalanceAtomic!: string;

  @Field({ description: 'onchain - ledger.' })
  driftAtomic!: string;

  @Field()
  blockNumber!: string;

  @Field()
  takenAt!: Date;
}

@ObjectType()
export class LedgerTreasuryTransfer {
  @Field(() => LedgerGroup, {
    description: 'On the rail the float left: Dr CROSS_RAIL_CLEARING / Cr TREASURY.',
  })
  sourceGroup!: LedgerGroup;

  @Field(() => LedgerGroup, {
    description: 'On the rail it arrived: Dr TREASURY / Cr CROSS_RAIL_CLEARING.',
  })
  destinationGroup!: LedgerGroup;
}

@InputType({
  description: 'Narrows groups or entries; every field is optional and they combine with AND.',
})
export class LedgerFilter {
  @Field({ nullable: true, description: 'Groups or entries touching this account key.' })
  account?: string;

  @Field(() => LedgerGroupKindEnum, { nullable: true })
  kind?: GroupKind;

  @Field({ nullable: true })
  intentRef?: string;

  @Field(() => ID, { nullable: true })
  policyId?: string;

  @Field({ nullable: true, description: 'chain|token' })
  asset?: string;

  @Field({ nullable: true, description: 'Posted at or after.' })
  from?: Date;

  @Field({ nullable: true, description: 'Posted before.' })
  to?: Date;
}

@InputType({
  description:
    'A float replenishment between rails, as it happened outside the service (bridge, swap, exchange).',
})
export class TreasuryTransferInput {
  @Field({ description: 'chain|token of the float that was moved out.' })
  sourceAsset!: string;

  @Field({ description: 'Atomic units that left the source treasury.' })
  sourceAmountAtomic!: string;

  @Field({ description: 'chain|token of the float that was topped up.' })
  destinationAsset!: string;

  @Field({
    description: 'Atomic units that arrived; independent of the source amount (no price feed).',
  })
  destinationAmountAtomic!: string;

  @Field({ description: 'Retrying with the same key returns the same pair.' })
  idempotencyKey!: string;

  @Field({ nullable: true })
  memo?: string;
}

/** The policy subgraph's entity, extended with its money. */
@Directive('@key(fields: "id")')
@ObjectType('Policy')
export class PolicyWithLedger {
  @Field(() => ID)
  id!: string;
}

/** The intent subgraph's entity, extended with its money. */
@Directive('@key(fields: "intentHash")')
@ObjectType('SpendIntent')
export class SpendIntentWithLedger {
  @Field(() => ID)
  intentHash!: string;
}
