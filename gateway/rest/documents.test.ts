import { loadPersistedDocuments, withSharedFragments } from './documents';
import { parse, Kind } from 'graphql';

describe('persisted documents', () => {
  const fragments = new Map([
    ['A', 'fragment A on T { id ...B }'],
    ['B', 'fragment B on T { name }'],
    ['C', 'fragment C on T { other }'],
  ]);

  it('appends exactly the shared fragments a document spreads, transitively and once each', () => {
    const source = withSharedFragments('query Q { t { ...A ... on T { id } } }', fragments);
    const names = parse(source)
      .definitions.filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION)
      .map((definition) =>
        definition.kind === Kind.FRAGMENT_DEFINITION ? definition.name.value : '',
      );
    expect(names).toEqual(['A', 'B']);
  });

  it('leaves a fragment the document defines itself alone', () => {
    const own = 'query Q { t { ...B } } fragment B on T { local }';
    expect(withSharedFragments(own, fragments)).toBe(own);
  });

  it('gives every route document of the repository its fragments', () => {
    const documents = loadPersistedDocuments();
    expect(documents.get('pausePolicy')).toMatch(/fragment OperatorPolicy on Policy/);
    for (const [name, source] of documents) {
      const operations = parse(source).definitions.filter(
        (definition) => definition.kind === Kind.OPERATION_DEFINITION,
      );
      expect([name, operations.length]).toEqual([name, 1]);
    }
  });
});
