// The GraphQL classes every list of this subgraph shares: the page info of a connection and the
// page arguments (size, cursor, time range) the dashboard lists take.
import { ArgsType, Field, Int, ObjectType } from 'type-graphql';

@ObjectType()
export class IntentPageInfo {
  @Field(() => String, {
    nullable: true,
    description: 'Opaque; pass as `after` for the next page.',
  })
  endCursor!: string | null;
  @Field() hasNextPage!: boolean;
}

@ArgsType()
export class PageArgs {
  @Field(() => Int, { defaultValue: 50, description: '1–200.' }) first!: number;
  @Field(() => String, { nullable: true }) after?: string | null;
  @Field(() => Date, { nullable: true, description: 'Inclusive lower bound.' }) from?: Date | null;
  @Field(() => Date, { nullable: true, description: 'Exclusive upper bound.' }) to?: Date | null;
}
