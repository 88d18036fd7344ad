// RFC 4180 CSV for the ledger export: CRLF line ends, a field quoted when it holds a comma, a
// quote, CR or LF (quotes doubled inside), and a field that a spreadsheet would run as a formula
// (leading =, +, -, @, tab or CR) prefixed with a single quote unless it is a plain signed number.
// Pure.

const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^[=+\-@\t\r]/;
const SIGNED_INTEGER = /^-?[0-9]+$/;

export function csvField(value: string): string {
  const safe = FORMULA_START.test(value) && !SIGNED_INTEGER.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function csvDocument(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  return [header, ...rows].map((row) => row.map(csvField).join(',') + '\r\n').join('');
}
