// Paged log searches (docs/operations.md CHAIN_LOG_PAGE_BLOCKS): public RPCs refuse an eth_getLogs
// whose block range is too long (a few thousand blocks on most providers), so every search of a
// range is split into pages of at most `pageBlocks` blocks, one request (or one set of requests,
// as the caller reads a page) per page, oldest first or newest first, stopping at the first page
// with a find when only the first find matters, and after `maxPages` pages when the caller bounds
// its work (the answer then says it is incomplete and where it stopped).

/** Blocks per eth_getLogs request when nothing is configured. */
export const DEFAULT_LOG_PAGE_BLOCKS = 2_000n;

/** Inclusive block numbers; empty when toBlock < fromBlock. */
export interface BlockSpan {
  readonly fromBlock: bigint;
  readonly toBlock: bigint;
}

export interface LogPaging {
  /** Blocks per page, at least 1. */
  readonly pageBlocks: bigint;
  /** oldest-first (default) walks up from fromBlock; newest-first walks down from toBlock. */
  readonly order?: 'oldest-first' | 'newest-first';
  /** Stop after the first page that finds anything. */
  readonly firstOnly?: boolean;
  /** Read at most this many pages; default: as many as the span needs. */
  readonly maxPages?: number;
}

export interface PagedLogs<T> {
  readonly found: T[];
  /** Pages read (one per page, however many requests the reader made for it). */
  readonly pages: number;
  /** False when maxPages stopped the search before the span's end (and nothing stopped it earlier). */
  readonly complete: boolean;
  /** The part of the span left unread; null when the search read it all or stopped at a find. */
  readonly unread: BlockSpan | null;
}

/** The pages of a span, in the order asked for; each at most pageBlocks long. */
export function* logPages(span: BlockSpan, paging: LogPaging): Generator<BlockSpan> {
  const size = paging.pageBlocks;
  if (size < 1n) throw new RangeError('a log page holds at least one block');
  if (paging.order === 'newest-first') {
    for (let end = span.toBlock; end >= span.fromBlock; end -= size) {
      const start = end - size + 1n > span.fromBlock ? end - size + 1n : span.fromBlock;
      yield { fromBlock: start, toBlock: end };
    }
    return;
  }
  for (let start = span.fromBlock; start <= span.toBlock; start += size) {
    const end = start + size - 1n < span.toBlock ? start + size - 1n : span.toBlock;
    yield { fromBlock: start, toBlock: end };
  }
}

/** The span from `page` (not read yet) to the end of the search. */
function unreadFrom(span: BlockSpan, page: BlockSpan, paging: LogPaging): BlockSpan {
  return paging.order === 'newest-first'
    ? { fromBlock: span.fromBlock, toBlock: page.toBlock }
    : { fromBlock: page.fromBlock, toBlock: span.toBlock };
}

/** Reads `span` page by page with `readPage` (see LogPaging for the order and when it stops). */
export async function searchLogPages<T>(
  span: BlockSpan,
  paging: LogPaging,
  readPage: (page: BlockSpan) => Promise<readonly T[]>,
): Promise<PagedLogs<T>> {
  const found: T[] = [];
  let pages = 0;
  for (const page of logPages(span, paging)) {
    if (paging.maxPages !== undefined && pages >= paging.maxPages)
      return { found, pages, complete: false, unread: unreadFrom(span, page, paging) };
    found.push(...(await readPage(page)));
    pages += 1;
    if (paging.firstOnly && found.length > 0) break;
  }
  return { found, pages, complete: true, unread: null };
}
