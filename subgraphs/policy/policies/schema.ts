// GraphQL types of policies: the Policy entity (latest version) with its version history, limits
// and on-chain registration, pages of policies, and the unsigned registration transaction an owner
// sends from their own wallet. Sign-in's types are in signIn/schema.ts.
import { GraphQLJSONObject } from 'graphql-scalars';
import { Directive, Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { PolicyStatus as PolicyStatusValue } from './reads';

export const POLICY_STATUS = { ACTIVE: 'ACTIVE', PAUSED: 'PAUSED' } as const;
export const POLICY_STATE = { ACTIVE: 'ACTIVE', PAUSED: 'PAUSED', EXPIRED: 'EXPIRED' } as const;
export type PolicyStateValue = keyof typeof POLICY_STATE;

registerEnumType(POLICY_STATUS, {
  name: 'PolicyStatus',
  description: 'Stored policy states. EXPIRED is derived from expiresAt and never stored.',
});
registerEnumType(POLICY_STATE, {
  name: 'PolicyState',
  description:
    'The state that applies now: EXPIRED once expiresAt has passed, else the stored status.',
});

@ObjectType({ description: 'The asset a policy is denominated in.' })
export class PolicyAsset {
  @Field({ description: 'CAIP-2 network, e.g. eip155:196.' })
  network!: string;

  @Field({ description: 'Token address, lowercase 0x-hex.' })
  token!: string;

  @Field()
  symbol!: string;

  @Field(() => Int)
  decimals!: number;
}

@ObjectType({
  description:
    'The money limits of a policy version, as display decimal strings in its asset ("25.00").',
})
export class PolicyLimits {
  @Field(() => PolicyAsset)
  asset!: PolicyAsset;

  @Field()
  dailyBudget!: string;

  @Field()
  perCallCap!: string;

  @Field({ description: 'BLOCK or ESCALATE.' })
  onPerCallCapExceeded!: string;

  @Field()
  hardCap!: string;

  @Field()
  escalateAbove!: string;

  @Field({
    description:
      'What dailyBudget is measured over: UTC_DAY (what was approved in a UTC day, settled or still reserved) or ROLLING_24H (settled in the last 24 hours plus still reserved).',
  })
  budgetWindow!: string;

  @Field(() => Int)
  maxDeadlineMinutes!: number;
}

@ObjectType({ description: 'One version of a policy. A new version never overwrites an old one.' })
export class PolicyVersion {
  @Field(() => ID, { description: 'Decimal uint256 policyId.' })
  policyId!: string;

  @Field(() => Int)
  version!: number;

  @Field({
    description: 'hashJson(rules): the hash intents committed to while this version was current.',
  })
  policyHash!: string;

  @Field(() => GraphQLJSONObject, {
    description:
      'The normalised rules document (DECISIONS "Spend policy (wire)", defaults filled in).',
  })
  rules!: Record<string, unknown>;

  @Field(() => PolicyLimits)
  limits!: PolicyLimits;

  @Field(() => Date, { nullable: true })
  expiresAt!: Date | null;

  @Field({ description: 'When this version was written.' })
  createdAt!: Date;
}

@ObjectType({
  description:
    'A confirmed PolicyRegistered or PolicyUpdated event, checked against the stored hash.',
})
export class PolicyRegistration {
  @Field(() => Int)
  chainId!: number;

  @Field({ description: 'CAIP-2, e.g. eip155:196.' })
  network!: string;

  @Field({ description: 'PolicyRegistry address, lowercase 0x-hex.' })
  registry!: string;

  @Field()
  txHash!: string;

  @Field({ description: 'Decimal block number.' })
  blockNumber!: string;

  @Field({ description: 'PolicyRegistered or PolicyUpdated.' })
  event!: string;

  @Field({ description: 'The hash the event published.' })
  policyHash!: string;

  @Field(() => Int, { description: 'The policy version whose hash it published.' })
  version!: number;

  @Field({
    description:
      'False once the policy was updated after this registration: the chain shows an older hash.',
  })
  upToDate!: boolean;

  @Field()
  recordedAt!: Date;
}

@Directive('@key(fields: "id")')
@ObjectType({ description: 'A spend policy at its latest version.' })
export class Policy {
  @Field(() => ID, { description: 'Decimal uint256 policyId.' })
  id!: string;

  @Field({ description: 'Owner address, lowercase 0x-hex.' })
  owner!: string;

  @Field(() => Int)
  version!: number;

  @Field(() => POLICY_STATUS)
  status!: PolicyStatusValue;

  @Field({ description: 'The hash an agent commits to on every intent.' })
  policyHash!: string;

  @Field(() => Date, { nullable: true })
  expiresAt!: Date | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The owner’s policy number (1, 2, …) the id is derived from: keccak256(abi.encodePacked(owner, ownerNonce)).',
  })
  ownerNonce!: string | null;

  @Field(() => GraphQLJSONObject, { description: 'The normalised rules of the latest version.' })
  rules!: Record<string, unknown>;
}

@ObjectType()
export class PolicyPageInfo {
  @Field(() => String, {
    nullable: true,
    description: 'Opaque; pass as `after` for the next page.',
  })
  endCursor!: string | null;

  @Field()
  hasNextPage!: boolean;
}

@ObjectType({ description: 'Policies ordered by policyId; stable while policies are added.' })
export class PolicyConnection {
  @Field(() => [Policy])
  nodes!: Policy[];

  @Field(() => PolicyPageInfo)
  pageInfo!: PolicyPageInfo;
}

@ObjectType({
  description:
    'An unsigned transaction for the owner’s wallet: send it from `from`, then sync its hash.',
})
export class PolicyRegistrationRequest {
  @Field(() => ID)
  policyId!: string;

  @Field(() => Int)
  chainId!: number;

  @Field({ description: 'CAIP-2, e.g. eip155:196.' })
  network!: string;

  @Field({
    description:
      'The owner: the registry derives the policyId from the sender, so only this address can send it.',
  })
  from!: string;

  @Field({ description: 'The PolicyRegistry contract.' })
  to!: string;

  @Field({
    description:
      'ABI-encoded call: register(ownerNonce, policyHash, expiresAt), or update(policyId, policyHash, expiresAt) once registered.',
  })
  data!: string;

  @Field({ description: 'Always "0": registration carries no value.' })
  value!: string;

  @Field({ description: 'register or update.' })
  function!: string;

  @Field()
  ownerNonce!: string;

  @Field()
  policyHash!: string;

  @Field({ description: 'Unix seconds as a decimal string; "0" when the policy never expires.' })
  expiresAtUnix!: string;
}
