// Spend-intent queries: `spendIntent(intentHash)` for an admin (see access.ts for why only an
// admin today); the same rule resolves SpendIntent entity references.
import { Arg, Ctx, ID, Query, Resolver } from 'type-graphql';
import type { ReferenceResolvers, SubgraphContext } from '../../kit';
import { readableSpendIntent } from './access';
import { SpendIntent } from './schema';
import type { SpendIntentRow } from './reads';

@Resolver()
export class SpendIntentResolver {
  @Query(() => SpendIntent, {
    nullable: true,
    description: 'Admin only for now; null for anyone else.',
  })
  async spendIntent(
    @Arg('intentHash', () => ID) intentHash: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<SpendIntentRow | null> {
    return readableSpendIntent(ctx, intentHash);
  }
}

export const intentReferenceResolvers: ReferenceResolvers = {
  SpendIntent: {
    __resolveReference: (reference, ctx) => readableSpendIntent(ctx, String(reference.intentHash)),
  },
  Policy: {
    __resolveReference: (reference) => ({ id: String(reference.id) }),
  },
};
