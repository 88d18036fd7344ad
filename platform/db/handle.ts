// The one database-handle type: whatever runs a statement, be it the pool or the one connection a
// transaction holds. Code that must open its own transaction takes pg's `Pool` instead.
import type { ClientBase, Pool } from 'pg';

/** Runs statements: the pool, or a connection inside a transaction. */
export type Db = Pick<ClientBase, 'query'>;

/** The pool itself: for work that checks out a connection or opens a transaction. */
export type DbPool = Pool;
