// The builder's contribution to the Capability entity (owned by the catalog): a stub keyed by id
// that the gateway resolves here to add builderTools. This is the cross-subgraph join the
// gateway plans for `capability(id) { ... builderTools { ... } }`.
import { Directive, Field, ID, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A builder route that relies on a catalog capability.' })
export class BuilderTool {
  @Field({ description: 'The REST path, exactly as the spec writes it.' })
  path!: string;

  @Field()
  method!: string;

  @Field()
  purpose!: string;
}

@Directive('@key(fields: "id")')
@ObjectType('Capability')
export class CapabilityBuilderTools {
  @Field(() => ID)
  id!: string;
}
