// The catalog's GraphQL types as type-graphql classes: Provider and Capability are federation
// entities keyed by id (other subgraphs extend Capability); Catalog is the whole live catalog
// with the execution object. Values come from view.ts; these classes only declare the shape.
import { Directive, Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { MATURITY, type MaturityLevel } from './maturity';

registerEnumType(MATURITY, {
  name: 'Maturity',
  description:
    'Maturity of a provider or capability, lowest first: EXPERIMENTAL < SANDBOX < VERIFIED. Only VERIFIED executes.',
});

@Directive('@key(fields: "id")')
@ObjectType({ description: 'A maker of capabilities; its id contains the maker’s name.' })
export class Provider {
  @Field(() => ID)
  id!: string;

  @Field()
  name!: string;

  @Field({ description: 'What the provider sells: domains, travel, email, shopping, gifts.' })
  kind!: string;

  @Field(() => MATURITY, {
    description: 'The provider’s own maturity; promoting it promotes no capability.',
  })
  maturity!: MaturityLevel;

  @Field(() => [Capability])
  capabilities!: Capability[];

  @Field({ description: 'True when at least one of its capabilities is verified and ungated.' })
  executableToday!: boolean;

  @Field()
  updatedAt!: Date;
}

@Directive('@key(fields: "id")')
@ObjectType({
  description:
    'Something a provider can do, e.g. domains.check. An id ending in ".*" covers every capability under that prefix.',
})
export class Capability {
  @Field(() => ID)
  id!: string;

  @Field(() => Provider)
  provider!: Provider;

  @Field(() => MATURITY, { description: 'The capability’s own maturity.' })
  maturity!: MaturityLevel;

  @Field(() => MATURITY, {
    description: 'The lower of the provider’s and the capability’s maturity.',
  })
  effectiveMaturity!: MaturityLevel;

  @Field({ description: 'Whether executing it pays a merchant.' })
  movesMoney!: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'The named refusal of a gated capability; null when not gated.',
  })
  gateCode!: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'The code an execution attempt is refused with today: the gate code, else CAPABILITY_NOT_VERIFIED below VERIFIED, else null.',
  })
  refusalCode!: string | null;

  @Field({
    description: 'True when effective maturity is VERIFIED and the capability is not gated.',
  })
  executable!: boolean;

  @Field()
  updatedAt!: Date;
}

@ObjectType({
  description: 'A settlement rail that exists but refuses to settle, with its named refusal.',
})
export class GatedRail {
  @Field()
  rail!: string;

  @Field()
  refusalCode!: string;
}

@ObjectType()
export class CatalogExecution {
  @Field(() => [ID], { description: 'Providers with at least one verified, ungated capability.' })
  providersExecutableToday!: string[];
}

@ObjectType({ description: 'The live catalog: the source of truth for what can execute.' })
export class Catalog {
  @Field(() => [Provider])
  providers!: Provider[];

  @Field(() => [Capability])
  capabilities!: Capability[];

  @Field(() => [GatedRail])
  gatedRails!: GatedRail[];

  @Field(() => CatalogExecution)
  execution!: CatalogExecution;

  @Field(() => [MATURITY], { description: 'The maturity levels, lowest first.' })
  maturityOrder!: MaturityLevel[];
}
