// The catalog subgraph's public surface: none yet. Other layers read the catalog through GraphQL
// (the gateway) only; the Apollo module itself is in subgraph.ts, which subgraphs/registry.ts loads.
export {};
