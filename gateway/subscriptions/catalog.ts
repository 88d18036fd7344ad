// catalogChanged: every provider or capability maturity change, public to every connection. NOTIFY
// `catalog_changed` (sent by the catalog subgraph's triggers on commit) carries the whole event, so
// no state is read; RESYNC tells a subscriber that changes may have been missed.
import {
  GraphQLEnumType,
  GraphQLID,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
} from 'graphql';

export const CATALOG_TOPIC = 'catalogChanged';
export const CATALOG_CHANNEL = 'catalog_changed';

export interface CatalogChangeEvent {
  kind: 'PROVIDER' | 'CAPABILITY' | 'RESYNC';
  id: string | null;
  maturity: 'EXPERIMENTAL' | 'SANDBOX' | 'VERIFIED' | null;
  changedAt: string;
}

/** A catalog_changed payload as an event; unknown kinds, maturities or ids are dropped (null). */
export function catalogNotification(payload: unknown): CatalogChangeEvent | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const record = payload as Record<string, unknown>;
  const kind = typeof record.kind === 'string' ? record.kind.toUpperCase() : '';
  const maturity = typeof record.maturity === 'string' ? record.maturity.toUpperCase() : '';
  if ((kind !== 'PROVIDER' && kind !== 'CAPABILITY') || typeof record.id !== 'string') return null;
  if (maturity !== 'EXPERIMENTAL' && maturity !== 'SANDBOX' && maturity !== 'VERIFIED') return null;
  return {
    kind,
    id: record.id,
    maturity,
    changedAt: typeof record.changedAt === 'string' ? record.changedAt : new Date().toISOString(),
  };
}

/** The CatalogChange type of the subscription schema. */
export function catalogChangeType(): GraphQLObjectType<CatalogChangeEvent> {
  return new GraphQLObjectType<CatalogChangeEvent>({
    name: 'CatalogChange',
    description:
      'A maturity change in the catalog. RESYNC means events may have been missed: re-read the catalog.',
    fields: {
      kind: {
        type: new GraphQLNonNull(
          new GraphQLEnumType({
            name: 'CatalogChangeKind',
            values: { PROVIDER: {}, CAPABILITY: {}, RESYNC: {} },
          }),
        ),
      },
      id: { type: GraphQLID },
      maturity: {
        type: new GraphQLEnumType({
          name: 'Maturity',
          values: { EXPERIMENTAL: {}, SANDBOX: {}, VERIFIED: {} },
        }),
      },
      changedAt: { type: new GraphQLNonNull(GraphQLString) },
    },
  });
}
