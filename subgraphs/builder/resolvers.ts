// Resolves Capability.builderTools from the builder route list (tools.ts), and Capability references by id
// (any id resolves; a capability no builder route relies on has an empty list).
import { FieldResolver, Resolver, Root } from 'type-graphql';
import type { ReferenceResolvers } from '../kit';
import { BuilderTool, CapabilityBuilderTools } from './schema';
import { builderToolsFor } from './tools';

@Resolver(() => CapabilityBuilderTools)
export class CapabilityBuilderToolsResolver {
  @FieldResolver(() => [BuilderTool], {
    description: 'Builder routes that rely on this capability.',
  })
  builderTools(@Root() capability: CapabilityBuilderTools): BuilderTool[] {
    return builderToolsFor(capability.id).map(({ path, method, purpose }) => ({
      path,
      method,
      purpose,
    }));
  }
}

export const builderReferenceResolvers: ReferenceResolvers = {
  Capability: {
    __resolveReference: (reference) => ({ id: String(reference.id) }),
  },
};
