// Rule 3, asset.allowed: the intent pays in exactly the policy's asset (network and token).
// Limits are denominated in that asset; in any other asset they would mean nothing.
import { block, notEvaluated, pass } from '../trace';
import type { Rule } from '../types';

export const assetAllowed: Rule = {
  id: 'asset.allowed',
  evaluate({ intent, compiled }) {
    if (compiled === null) return notEvaluated('asset.allowed');
    if (intent.network !== compiled.network || intent.token !== compiled.token) {
      return block(
        'asset.allowed',
        `${intent.network}/erc20:${intent.token}`,
        compiled.assetText,
        'BLOCKED_ASSET',
      );
    }
    // Equal assets spell the same, so the prepared string serves as observed too.
    return pass('asset.allowed', compiled.assetText, compiled.assetText);
  },
};
