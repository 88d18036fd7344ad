// A bound SpendIntent, the intent subgraph's entity keyed by its intentHash, and a dashboard page
// of them. Created by create_spend_intent or a preflight of a given intent (preflight/createIntent.ts,
// preflight/batch.ts); read by spendIntent and the dashboard lists.
import { Directive, Field, ID, ObjectType } from 'type-graphql';
import { IntentPageInfo } from '../lists/pages';
import type { SpendIntentRow } from './reads';

@Directive('@key(fields: "intentHash")')
@ObjectType({ description: 'A spend intent bound by the service, identified by its EIP-712 hash.' })
export class SpendIntent {
  @Field(() => ID, { description: '0x + 64 hex: the EIP-712 typed-data hash of the intent.' })
  intentHash!: string;

  @Field(() => ID, { description: 'Decimal uint256 policyId the intent was bound to.' })
  policyId!: string;

  @Field()
  agentId!: string;

  @Field({ description: 'Amount in atomic units of the policy asset, as a decimal string.' })
  amountAtomic!: string;

  @Field()
  createdAt!: Date;
}

@ObjectType({ description: 'Newest first; stable while intents are added.' })
export class SpendIntentConnection {
  @Field(() => [SpendIntent]) nodes!: SpendIntentRow[];
  @Field(() => IntentPageInfo) pageInfo!: IntentPageInfo;
}
