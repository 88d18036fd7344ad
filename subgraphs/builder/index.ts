// The builder subgraph's public surface: none yet. Other layers reach the builder through GraphQL
// (the gateway) only; the Apollo module itself is in subgraph.ts, which subgraphs/registry.ts loads.
export {};
