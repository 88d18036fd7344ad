// Bridges type-graphql classes to an Apollo Federation 2 subgraph schema: build the type-graphql
// schema, print it with its directives, prepend the pinned federation @link, and hand SDL plus
// resolvers (and entity reference resolvers) to buildSubgraphSchema. No I/O.
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { type GraphQLSchema, parse } from 'graphql';
import { buildSchema, type ClassType, createResolversMap, type NonEmptyArray } from 'type-graphql';
import type { SubgraphContext } from './types';

/** Pinned to a version that @apollo/composition 2.14 knows; change only together with the composer. */
export const FEDERATION_SPEC_URL = 'https://specs.apollo.dev/federation/v2.7';
export const FEDERATION_IMPORTS = [
  '@key',
  '@shareable',
  '@external',
  '@requires',
  '@provides',
  '@inaccessible',
  '@tag',
] as const;

export interface FederatedSchemaOptions {
  /** type-graphql resolver classes; the schema holds only the types reachable from them. */
  resolvers: NonEmptyArray<ClassType>;
  /** Types to emit even when no resolver reaches them (e.g. an entity only other subgraphs return). */
  orphanedTypes?: ClassType[];
}

/** `{TypeName: {__resolveReference(reference, context)}}` for each entity this subgraph resolves. */
export type ReferenceResolvers = Record<
  string,
  { __resolveReference(reference: Record<string, unknown>, context: SubgraphContext): unknown }
>;

function federationHeader(): string {
  const imports = FEDERATION_IMPORTS.map((name) => `"${name}"`).join(', ');
  return `extend schema @link(url: "${FEDERATION_SPEC_URL}", import: [${imports}])`;
}

function mergeResolvers(
  generated: GraphQLResolverMap<unknown>,
  references: ReferenceResolvers,
): GraphQLResolverMap<unknown> {
  const merged: GraphQLResolverMap<unknown> = { ...generated };
  for (const [typeName, reference] of Object.entries(references)) {
    const existing = merged[typeName];
    if (existing !== undefined && typeof existing !== 'object') {
      throw new Error(`cannot attach __resolveReference to ${typeName}: it is not an object type`);
    }
    merged[typeName] = { ...(existing ?? {}), ...reference } as GraphQLResolverMap<unknown>[string];
  }
  return merged;
}

export async function buildFederatedSchema(
  options: FederatedSchemaOptions,
  referenceResolvers: ReferenceResolvers = {},
): Promise<GraphQLSchema> {
  const typeGraphqlSchema = await buildSchema({
    resolvers: options.resolvers,
    orphanedTypes: options.orphanedTypes,
    // The federation root fields (_service, _entities) are added by buildSubgraphSchema.
    skipCheck: true,
    validate: false,
  });
  const sdl = `${federationHeader()}\n\n${printSchemaWithDirectives(typeGraphqlSchema)}`;
  return buildSubgraphSchema({
    typeDefs: parse(sdl),
    resolvers: mergeResolvers(
      createResolversMap(typeGraphqlSchema) as GraphQLResolverMap<unknown>,
      referenceResolvers,
    ),
  });
}
