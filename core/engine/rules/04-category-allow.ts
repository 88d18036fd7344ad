// Rule 4, category.allow: the intent's category is on the allow list and not on the deny list.
// The allow list is never empty (validation requires it), so categories are opt-in.
import { block, notEvaluated, pass } from '../trace';
import type { Rule } from '../types';

export const categoryAllow: Rule = {
  id: 'category.allow',
  evaluate({ intent, compiled }) {
    if (compiled === null) return notEvaluated('category.allow');
    const { category } = intent;
    if (compiled.categoriesDeny.has(category))
      return block('category.allow', category, null, 'BLOCKED_CATEGORY:DENIED');
    if (!compiled.categoriesAllow.has(category))
      return block('category.allow', category, null, 'BLOCKED_CATEGORY:NOT_ALLOWED');
    return pass('category.allow', category, null);
  },
};
