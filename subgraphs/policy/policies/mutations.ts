// Policy writes for admins and owner sessions: create, update (a new version and hash), pause,
// resume, and on-chain registration (the unsigned call for the owner's wallet, then the sync from
// the confirmed receipt). An owner acts only on its own policies; another owner's policy answers
// POLICY_NOT_FOUND, as if it did not exist. Invalid documents are POLICY_RULES_INVALID with every field.
import { Arg, Args, ArgsType, Ctx, Field, ID, Mutation, Resolver } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { AppError } from '../../../core/errors';
import { type NormalisedPolicyRules, validatePolicy } from '../../../core/validation/policy';
import { describeActor, type SubgraphContext } from '../../kit';
import { requireReadablePolicy, writerScope } from './access';
import {
  readRegistryEvent,
  registrationRequest,
  type RegistrationRequestView,
} from './registration';
import { Policy, PolicyRegistrationRequest } from './schema';
import type { PolicyRow } from './reads';
import {
  createPolicy,
  type OwnerScope,
  recordRegistration,
  setPolicyStatus,
  updatePolicy,
  type WriteAudit,
} from './writes';

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
