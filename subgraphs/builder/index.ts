// The builder subgraph's public surface: empty, because no other layer calls builder code; clients
// reach Capability.builderTools through the gateway's GraphQL. The Apollo module is subgraph.ts,
// which subgraphs/registry.ts loads.
export {};
