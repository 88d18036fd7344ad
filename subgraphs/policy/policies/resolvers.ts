// Policies in GraphQL: reads by the rules of access.ts (another owner's policy reads as missing; the
// Policy fields inherit the parent's access) and the writes of admins and owner sessions (create,
// update, pause, resume, on-chain registration), with invalid documents POLICY_RULES_INVALID.
import { GraphQLJSONObject } from 'graphql-scalars';
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
import { AppError } from '../../../core/errors';
import { type NormalisedPolicyRules, validatePolicy } from '../../../core/validation/policy';
import {
  describeActor,
  requireActor,
  type ReferenceResolvers,
  type SubgraphContext,
} from '../../kit';
import {
  consumerReadablePolicy,
  readablePolicy,
  requireReadablePolicy,
  writerScope,
} from './access';
import {
  pageSize,
  type PolicyPage,
  type PolicyRow,
  readCurrentRegistration,
  readPolicyCreatedAt,
  readPolicyPage,
  readPolicyVersion,
  readPolicyVersions,
} from './reads';
import {
  readRegistryEvent,
  registrationRequest,
  type RegistrationRequestView,
} from './registration';
import {
  Policy,
  PolicyConnection,
  PolicyLimits,
  PolicyRegistration,
  PolicyRegistrationRequest,
  POLICY_STATE,
  type PolicyStateValue,
  PolicyVersion,
} from './schema';
import { limitsOf, registrationView, stateOf, versionView } from './views';
import {
  createPolicy,
  type OwnerScope,
  recordRegistration,
  setPolicyStatus,
  updatePolicy,
  type WriteAudit,
} from './writes';

@ArgsType()
class PolicyPageArgs {
  @Field(() => Int, { nullable: true, description: 'Page size, 1 to 100 (default 20).' })
  first?: number | null;

  @Field(() => String, { nullable: true, description: 'The endCursor of the previous page.' })
  after?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'Admins: only this owner’s policies. Owners may name only themselves.',
  })
  owner?: string | null;
}

@ArgsType()
class PolicyVersionArgs {
  @Field(() => ID)
  policyId!: string;

  @Field(() => Int)
  version!: number;
}

@ArgsType()
class VersionPageArgs {
  @Field(() => Int, {
    nullable: true,
    description: 'How many versions, newest first: 1 to 100 (default 20).',
  })
  first?: number | null;

  @Field(() => Int, {
    nullable: true,
    description: 'Only versions older than this one (paging back through history).',
  })
  beforeVersion?: number | null;
}

function toConnection(page: PolicyPage): PolicyConnection {
  return {
    nodes: page.nodes as unknown as Policy[],
    pageInfo: { endCursor: page.endCursor, hasNextPage: page.hasNextPage },
  };
}

@Resolver(() => Policy)
export class PolicyResolver {
  @Query(() => Policy, {
    nullable: true,
    description: 'Admin, or the owner of this policy; null for anyone else.',
  })
  async policy(
    @Arg('id', () => ID) id: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PolicyRow | null> {
    return readablePolicy(ctx, id);
  }

  @Query(() => PolicyConnection, {
    description: 'The signed-in owner’s policies; an admin’s: every owner’s. Ordered by policyId.',
  })
  async policies(
    @Args() args: PolicyPageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PolicyConnection> {
    const actor = requireActor(ctx, ['admin', 'owner']);
    const named = args.owner?.toLowerCase() ?? null;
    if (actor.kind === 'owner' && named !== null && named !== actor.address) {
      throw new AppError('FORBIDDEN', 'An owner session lists only its own policies.');
    }
    const owner = actor.kind === 'owner' ? actor.address : named;
    return toConnection(
      await readPolicyPage(ctx.db, {
        owner,
        first: pageSize(args.first),
        after: args.after ?? null,
      }),
    );
  }

  @Query(() => PolicyVersion, {
    nullable: true,
    description: 'One version of a policy, by number; same access as policy(id).',
  })
  async policyVersion(
    @Args() { policyId, version }: PolicyVersionArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PolicyVersion | null> {
    if ((await readablePolicy(ctx, policyId)) === null) return null;
    const row = await readPolicyVersion(ctx.db, policyId, version);
    return row === null ? null : versionView(row);
  }

  @Query(() => Policy, {
    description:
      'The consumer surface: a consumer session’s bound policy (naming another is FORBIDDEN). Owners and admins name one; ' +
      'without a session a named policy is readable only where CONSUMER_AUTH_REQUIRED=0.',
  })
  async consumerPolicy(
    @Arg('policyId', () => ID, { nullable: true }) policyId: string | null,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PolicyRow> {
    return consumerReadablePolicy(ctx, policyId ?? null);
  }

  @FieldResolver(() => String, { description: 'The policy’s display name ("" when unnamed).' })
  name(@Root() policy: PolicyRow): string {
    return typeof policy.rules.name === 'string' ? policy.rules.name : '';
  }

  @FieldResolver(() => POLICY_STATE, {
    description: 'EXPIRED once expiresAt has passed, else the stored status.',
  })
  state(@Root() policy: PolicyRow, @Ctx() ctx: SubgraphContext): PolicyStateValue {
    return stateOf(policy, ctx.now());
  }

  @FieldResolver(() => PolicyLimits)
  limits(@Root() policy: PolicyRow): PolicyLimits {
    return limitsOf(policy.rules);
  }

  @FieldResolver(() => Date, { description: 'When version 1 was written.' })
  async createdAt(@Root() policy: PolicyRow, @Ctx() ctx: SubgraphContext): Promise<Date> {
    if (policy.version === 1) return policy.versionCreatedAt;
    return (await readPolicyCreatedAt(ctx.db, policy.id)) ?? policy.versionCreatedAt;
  }

  @FieldResolver(() => Date, {
    description: 'The latest version’s creation or status change, whichever is later.',
  })
  updatedAt(@Root() policy: PolicyRow): Date {
    const changed = policy.statusChangedAt;
    return changed !== null && changed > policy.versionCreatedAt
      ? changed
      : policy.versionCreatedAt;
  }

  @FieldResolver(() => [PolicyVersion], {
    description: 'Every version, newest first; old versions stay readable.',
  })
  async versions(
    @Root() policy: PolicyRow,
    @Args() args: VersionPageArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PolicyVersion[]> {
    const rows = await readPolicyVersions(ctx.db, policy.id, {
      first: pageSize(args.first),
      beforeVersion: args.beforeVersion ?? null,
    });
    return rows.map(versionView);
  }

  @FieldResolver(() => PolicyRegistration, {
    nullable: true,
    description: 'The newest confirmed on-chain registration; null if never registered.',
  })
  async registration(
    @Root() policy: PolicyRow,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PolicyRegistration | null> {
    const row = await readCurrentRegistration(ctx.db, policy.id);
    return row === null ? null : registrationView(row, policy.policyHash);
  }
}

export const policyReferenceResolvers: ReferenceResolvers = {
  Policy: {
    __resolveReference: (reference, ctx) => readablePolicy(ctx, String(reference.id)),
  },
};

function validRules(document: unknown): NormalisedPolicyRules {
  const result = validatePolicy(document);
  if (!result.ok) throw new AppError('POLICY_RULES_INVALID', undefined, result.errors);
  return result.rules;
}

function auditOf(ctx: SubgraphContext): WriteAudit {
  return { actor: describeActor(ctx.actor), at: ctx.now() };
}

/** An owner session creates policies for itself only; an admin for any owner. */
function checkCreator(scope: OwnerScope, rules: NormalisedPolicyRules): void {
  if (!scope.anyOwner && rules.owner !== scope.owner) {
    throw new AppError('FORBIDDEN', 'An owner session creates policies for its own address only.', [
      { field: 'owner', reason: `must be ${scope.owner}, the signed-in address` },
    ]);
  }
}

@ArgsType()
class UpdatePolicyArgs {
  @Field(() => ID)
  policyId!: string;

  @Field(() => GraphQLJSONObject, {
    description: 'The complete new policy document; the owner must stay the same.',
  })
  policy!: Record<string, unknown>;
}

@ArgsType()
class SyncRegistrationArgs {
  @Field(() => ID)
  policyId!: string;

  @Field({ description: 'The hash of the transaction the owner sent with the requested calldata.' })
  txHash!: string;
}

@Resolver()
export class PolicyMutationResolver {
  @Mutation(() => Policy, {
    description:
      'Admin, or an owner session for its own address. Version 1, ACTIVE, under the owner’s next nonce.',
  })
  async createPolicy(
    @Arg('policy', () => GraphQLJSONObject, {
      description: 'The policy document (DECISIONS "Spend policy (wire)"), owner inside it.',
    })
    document: Record<string, unknown>,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PolicyRow> {
    const scope = writerScope(ctx);
    const rules = validRules(document);
    checkCreator(scope, rules);
    return createPolicy(ctx, rules, auditOf(ctx));
  }

  @Mutation(() => Policy, {
    description:
      'Admin or the owner. A new version with a new policyHash; old versions stay readable. Intents committed to the old hash are refused by the engine.',
  })
  async updatePolicy(
    @Args() { policyId, policy }: UpdatePolicyArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PolicyRow> {
    const scope = writerScope(ctx);
    return updatePolicy(ctx, policyId, validRules(policy), scope, auditOf(ctx));
  }

  @Mutation(() => Policy, { description: 'Admin or the owner. Idempotent.' })
  async pausePolicy(
    @Arg('policyId', () => ID) policyId: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PolicyRow> {
    return setPolicyStatus(ctx, policyId, 'PAUSED', writerScope(ctx), auditOf(ctx));
  }

  @Mutation(() => Policy, { description: 'Admin or the owner. Idempotent.' })
  async resumePolicy(
    @Arg('policyId', () => ID) policyId: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PolicyRow> {
    return setPolicyStatus(ctx, policyId, 'ACTIVE', writerScope(ctx), auditOf(ctx));
  }

  @Mutation(() => PolicyRegistrationRequest, {
    description:
      'Admin or the owner. The unsigned PolicyRegistry call the owner sends from their wallet; then syncPolicyRegistration with its hash.',
  })
  async requestPolicyRegistration(
    @Arg('policyId', () => ID) policyId: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<RegistrationRequestView> {
    writerScope(ctx); // only writers ask: a consumer session is FORBIDDEN, no credential AUTH_REQUIRED
    return registrationRequest(ctx, await requireReadablePolicy(ctx, policyId));
  }

  @Mutation(() => Policy, {
    description:
      'Admin or the owner. Reads the confirmed receipt and records chain, tx and block; RULES_HASH_MISMATCH when the event’s hash is not the stored one.',
  })
  async syncPolicyRegistration(
    @Args() { policyId, txHash }: SyncRegistrationArgs,
    @Ctx() ctx: SubgraphContext,
  ): Promise<PolicyRow> {
    const scope = writerScope(ctx);
    await requireReadablePolicy(ctx, policyId);
    const event = await readRegistryEvent(ctx, policyId, txHash);
    return recordRegistration(ctx, policyId, event, scope, auditOf(ctx));
  }
}
