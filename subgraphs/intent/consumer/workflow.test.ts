// The purchase workflow table (workflow.ts) against the lifecycle (core/consumer/lifecycle.ts):
// the checker finds no disagreement on the real table, and finds both kinds on mutated copies, so
// a lifecycle edge without a step, or a step moving an edge the lifecycle does not allow, fails.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONSUMER_INTENT_STATES, isTerminal, TRANSITIONS } from '../../../core/consumer/lifecycle';
import { checkPurchaseWorkflow, PURCHASE_STEPS, type PurchaseStep, stepsLeaving } from './workflow';

const ROOT = join(__dirname, '..', '..', '..');

describe('the purchase workflow table', () => {
  it('has a step for every lifecycle edge and no step outside the lifecycle', () => {
    expect(checkPurchaseWorkflow(PURCHASE_STEPS)).toEqual([]);
  });

  it('fails when a lifecycle edge has no step (the move removed from the table)', () => {
    const withoutFunding: PurchaseStep[] = PURCHASE_STEPS.map((step) =>
      step.name === 'fund' ? { ...step, moves: [] } : step,
    );
    expect(checkPurchaseWorkflow(withoutFunding)).toEqual([
      'no step moves AWAITING_FUNDING → FUNDED',
    ]);
  });

  it('fails when the lifecycle gains an edge no step takes', () => {
    const widened = { ...TRANSITIONS, COMPLETED: ['REFUND_PENDING' as const] };
    expect(checkPurchaseWorkflow(PURCHASE_STEPS, widened)).toEqual([
      'no step moves COMPLETED → REFUND_PENDING',
    ]);
  });

  it('fails when a step moves an edge the lifecycle does not allow', () => {
    const skipping: PurchaseStep[] = PURCHASE_STEPS.map((step) =>
      step.name === 'fund'
        ? { ...step, moves: [...step.moves, ['AWAITING_FUNDING', 'EXECUTION_QUEUED'] as const] }
        : step,
    );
    expect(checkPurchaseWorkflow(skipping)).toEqual([
      'step fund moves AWAITING_FUNDING → EXECUTION_QUEUED, which the lifecycle does not allow',
    ]);
  });

  it('names a module that exists for every step a job runs, and none for a reserved one', () => {
    for (const step of PURCHASE_STEPS) {
      expect(step.runBy === null).toBe(step.module === null);
      if (step.module !== null)
        expect(existsSync(join(ROOT, 'subgraphs/intent/consumer', step.module))).toBe(true);
    }
    expect(new Set(PURCHASE_STEPS.map((step) => step.name)).size).toBe(PURCHASE_STEPS.length);
  });

  it('is what docs/consumer.md links each state to, and what docs/architecture.md draws', () => {
    const consumerDoc = readFileSync(join(ROOT, 'docs/consumer.md'), 'utf8');
    for (const state of CONSUMER_INTENT_STATES) {
      const line = consumerDoc.split('\n').find((text) => text.startsWith(`| \`${state}\` |`));
      expect(line).toBeDefined();
      const names = stepsLeaving(state).map((step) => step.name);
      if (isTerminal(state)) expect(names).toEqual([]);
      for (const name of names) expect(line).toContain(`[${name}]`);
    }
    const architecture = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    for (const step of PURCHASE_STEPS) expect(architecture).toContain(`| \`${step.name}\` |`);
  });
});
