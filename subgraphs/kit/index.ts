// The subgraph kit's public surface: what a subgraph module, the gateway and the CLI import.
// Each name lives in a module with one job; this file only re-exports them.
export type {
  BuilderServices,
  EntityClass,
  FundingChainAccess,
  SubgraphBeside,
  SubgraphBesideDeps,
  SubgraphChains,
  ConsumerRails,
  ConsumerRailAsset,
  SubgraphContext,
  SubgraphModule,
  SubgraphName,
  SubgraphSettings,
} from './types';
export { DEFAULT_SUBGRAPH_SETTINGS, dataSourceOf, settingsOf } from './context';
export {
  buildConsumerRails,
  CONSUMER_SPREAD_BPS,
  type ConsumerRailParts,
  type RailChain,
} from './consumerRails';
export {
  buildFederatedSchema,
  FEDERATION_SPEC_URL,
  type FederatedSchemaOptions,
  type ReferenceResolvers,
} from './federation';
export {
  classifyError,
  formatSubgraphError,
  toGraphQLError,
  type SubgraphErrorExtensions,
} from './errors';
export { describeActor, requireActor, requireAdmin, requirePaidCall } from './auth';
export {
  CORRELATION_HEADER,
  createSubgraphServer,
  executeInProcess,
  startSubgraphHttp,
  type InProcessRequest,
  type RequestCredentials,
  type SubgraphHttpHandle,
  type SubgraphHttpOptions,
  type SubgraphServerDeps,
} from './server';
export { appErrorFromSql, DEFECT, type SqlStateMap } from './sqlStates';
export { decodeCursor, encodeCursor, pageSize, type PageBounds } from './paging';
