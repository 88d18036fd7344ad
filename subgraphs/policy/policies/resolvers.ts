// Policy reads. `policy(id)` answers the latest version for an admin or the owning owner and null for
// anyone else (see access.ts); the same rule resolves Policy entity references. `policies` lists the
// signed-in owner's policies (an admin's: everyone's), `consumerPolicy` is the consumer surface's
// read, and the Policy fields below (history, limits, registration) inherit the parent's access.
import {
  Arg,
  Args,
  ArgsType,
  Ctx,
  FieldResolver,
  ID,
  Int,
  Query,
  Resolver,
  Root,
  Field,
} from 'type-graphql';
import { AppError } from '../../../core/errors';
import { requireActor, type ReferenceResolvers, type SubgraphContext } from '../../kit';
import { consumerReadablePolicy, readablePolicy } from './access';
import {
  Policy,
  PolicyConnection,
  PolicyLimits,
  PolicyRegistration,
  POLICY_STATE,
  type PolicyStateValue,
  PolicyVersion,
} from './schema';
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
import { limitsOf, registrationView, stateOf, versionView } from './views';

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
