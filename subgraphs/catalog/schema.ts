// The catalog's GraphQL types as type-graphql classes. Provider, Capability and GatedRail are also
// the TypeORM entities of their tables (one class per thing: its columns are read through the
// process's DataSource, reads.ts); fields derived per request (standing, links) are no columns and
// come from views.ts. Provider and Capability are federation entities keyed by id (other subgraphs
// extend Capability); Catalog is the whole live catalog with the execution object.
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Directive, Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { MATURITY, type MaturityLevel } from './maturity';

registerEnumType(MATURITY, {
  name: 'Maturity',
  description:
    'Maturity of a provider or capability, lowest first: EXPERIMENTAL < SANDBOX < VERIFIED. Only VERIFIED executes.',
});

@Directive('@key(fields: "id")')
@ObjectType({ description: 'A maker of capabilities; its id contains the maker’s name.' })
@Entity({ schema: 'catalog', name: 'providers' })
export class Provider {
  @Field(() => ID)
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Field()
  @Column({ type: 'text' })
  name!: string;

  @Field({ description: 'What the provider sells: domains, travel, email, shopping, gifts.' })
  @Column({ type: 'text' })
  kind!: string;

  @Field(() => MATURITY, {
    description: 'The provider’s own maturity; promoting it promotes no capability.',
  })
  @Column({ type: 'text' })
  maturity!: MaturityLevel;

  @Field(() => [Capability])
  capabilities!: Capability[];

  @Field({ description: 'True when at least one of its capabilities is verified and ungated.' })
  executableToday!: boolean;

  @Field()
  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

@Directive('@key(fields: "id")')
@ObjectType({
  description:
    'Something a provider can do, e.g. domains.check. An id ending in ".*" covers every capability under that prefix.',
})
@Entity({ schema: 'catalog', name: 'capabilities' })
export class Capability {
  @Field(() => ID)
  @PrimaryColumn({ type: 'text' })
  id!: string;

  /** The column behind `provider`; GraphQL serves the provider itself. */
  @Column({ name: 'provider_id', type: 'text' })
  providerId!: string;

  @Field(() => Provider)
  provider!: Provider;

  @Field(() => MATURITY, { description: 'The capability’s own maturity.' })
  @Column({ type: 'text' })
  maturity!: MaturityLevel;

  @Field(() => MATURITY, {
    description: 'The lower of the provider’s and the capability’s maturity.',
  })
  effectiveMaturity!: MaturityLevel;

  @Field({ description: 'Whether executing it pays a merchant.' })
  @Column({ name: 'moves_money', type: 'boolean' })
  movesMoney!: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'The named refusal of a gated capability; null when not gated.',
  })
  @Column({ name: 'gate_code', type: 'text', nullable: true })
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
  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

@ObjectType({
  description: 'A settlement rail that exists but refuses to settle, with its named refusal.',
})
@Entity({ schema: 'catalog', name: 'gated_rails' })
export class GatedRail {
  @Field()
  @PrimaryColumn({ type: 'text' })
  rail!: string;

  @Field()
  @Column({ name: 'refusal_code', type: 'text' })
  refusalCode!: string;
}

/** The catalog's TypeORM entities, for the process's one DataSource (subgraphs/registry.ts). */
export const CATALOG_ENTITIES = [Provider, Capability, GatedRail];

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
