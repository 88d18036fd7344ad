// The UTC day a budget is counted on (`YYYY-MM-DD` of an instant): the day a reservation belongs
// to, the `day` argument of the window functions, and the `day` of get_ledger. The instant comes
// from the caller's clock; this reads none.
export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}
