// The wire shape the intent subgraph answers in: the REST bodies of DECISIONS (preflight response,
// tool answers), carried through GraphQL as JSONObject. Each body's fields are fixed where it is
// built (preflight/decide.ts, tools/reads.ts, preflight/createIntent.ts); this only names the envelope.
export type Json = Record<string, unknown>;
