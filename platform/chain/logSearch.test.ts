// The paged log search's pure part: pages never longer than asked, in both orders, stopping at a
// find or at the page bound with what is left unread.
import { logPages, searchLogPages } from './logSearch';

const span = { fromBlock: 10n, toBlock: 21n };

test('pages cover the span exactly, each at most pageBlocks long, oldest or newest first', () => {
  expect([...logPages(span, { pageBlocks: 5n })]).toEqual([
    { fromBlock: 10n, toBlock: 14n },
    { fromBlock: 15n, toBlock: 19n },
    { fromBlock: 20n, toBlock: 21n },
  ]);
  expect([...logPages(span, { pageBlocks: 5n, order: 'newest-first' })]).toEqual([
    { fromBlock: 17n, toBlock: 21n },
    { fromBlock: 12n, toBlock: 16n },
    { fromBlock: 10n, toBlock: 11n },
  ]);
  expect([...logPages({ fromBlock: 5n, toBlock: 4n }, { pageBlocks: 5n })]).toEqual([]);
  expect(() => [...logPages(span, { pageBlocks: 0n })]).toThrow(RangeError);
});

test('firstOnly stops at the first page with a find; maxPages stops and names the unread part', async () => {
  const readPage = async (page: { fromBlock: bigint; toBlock: bigint }) =>
    page.fromBlock <= 16n && 16n <= page.toBlock ? [16n] : [];
  const first = await searchLogPages(span, { pageBlocks: 2n, firstOnly: true }, readPage);
  expect(first).toEqual({ found: [16n], pages: 4, complete: true, unread: null });

  const bounded = await searchLogPages(span, { pageBlocks: 2n, maxPages: 2 }, readPage);
  expect(bounded).toEqual({
    found: [],
    pages: 2,
    complete: false,
    unread: { fromBlock: 14n, toBlock: 21n },
  });
  const down = await searchLogPages(
    span,
    { pageBlocks: 4n, maxPages: 1, order: 'newest-first' },
    readPage,
  );
  expect(down).toEqual({
    found: [],
    pages: 1,
    complete: false,
    unread: { fromBlock: 10n, toBlock: 17n },
  });
});
