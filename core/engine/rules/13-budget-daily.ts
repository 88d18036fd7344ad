// Rule 13, budget.daily: settled + active reservations + amount ≤ dailyBudget, over the policy's
// budget window. UTC_DAY (the default) sums what was approved in the UTC day of `now`, settled or
// still reserved: a reservation counts toward the day it was approved, whenever it settles.
// ROLLING_24H sums what settled in the 24 hours before `now` and every reservation still active.
// Reservations count because an approval is authority to spend; without them N concurrent intents
// could each fit alone and overspend together. Observed is that sum; the note names the window
// (`UTC_DAY:<day>` or `ROLLING_24H`), after `BLOCKED_BUDGET:` when it blocks. The caller's window
// sums must be the ones of that window (subgraphs/intent, docs/engine.md "The budget window").
import { block, notEvaluated, pass } from '../trace';
import type { Rule } from '../types';

const MS_PER_DAY = 86_400_000;
// The note of the last day seen: one decision after another falls on the same day.
let lastDay = { index: Number.NaN, note: '' };

/** `UTC_DAY:YYYY-MM-DD` for the UTC day holding nowMs. */
function utcDayNote(nowMs: number): string {
  const index = Math.floor(nowMs / MS_PER_DAY);
  if (index !== lastDay.index)
    lastDay = { index, note: `UTC_DAY:${new Date(index * MS_PER_DAY).toISOString().slice(0, 10)}` };
  return lastDay.note;
}

export const budgetDaily: Rule = {
  id: 'budget.daily',
  evaluate({ intent, window, compiled, nowMs }) {
    if (compiled === null) return notEvaluated('budget.daily');
    const totalAtomic =
      window.settledTodayAtomic + window.reservedTodayAtomic + intent.amountAtomic;
    const observed = totalAtomic.toString();
    const windowNote = compiled.budgetWindow === 'ROLLING_24H' ? 'ROLLING_24H' : utcDayNote(nowMs);
    if (totalAtomic > compiled.dailyBudgetAtomic)
      return block(
        'budget.daily',
        observed,
        compiled.dailyBudgetText,
        `BLOCKED_BUDGET:${windowNote}`,
      );
    return pass('budget.daily', observed, compiled.dailyBudgetText, windowNote);
  },
};
