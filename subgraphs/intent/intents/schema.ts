// The intent subgraph's first entity: a bound SpendIntent, keyed by its intentHash. Creation,
// preflight and the decision trace arrive with the control-plane routes.
import { Directive, Field, ID, ObjectType } from 'type-graphql';

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
