// Rule 13, budget.daily: settled today + active reservations today + amount ≤ dailyBudget, for
// the UTC day of `now`. Reservations count because an approval is authority to spend; without
// them N concurrent intents could each fit alone and overspend together. Observed is that sum.
import { block, notEvaluated, pass } from '../trace';
import type { Rule } from '../types';

export const budgetDaily: Rule = {
  id: 'budget.daily',
  evaluate({ intent, window, compiled }) {
    if (compiled === null) return notEvaluated('budget.daily');
    const totalAtomic = window.settledTodayAtomic + window.reservedTodayAtomic + intent.amountAtomic;
    const observed = totalAtomic.toString();
    if (totalAtomic > compiled.dailyBudgetAtomic) return block('budget.daily', observed, compiled.dailyBudgetText, 'BLOCKED_BUDGET');
    return pass('budget.daily', observed, compiled.dailyBudgetText);
  },
};
