// Connection-URL arithmetic: the same server and login, another database.
/** `url` with its database (path) replaced by `database`. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
