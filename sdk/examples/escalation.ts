// Example: a payment over the owner's threshold. The preflight answers ESCALATED_* with a pollRef;
// the agent waits (polling /escalation_status) while the owner decides on a bound channel, and once
// approved preflights exactly the same intent again, which is now APPROVED.
//   same environment as preflight.ts
import {
  exampleAgent,
  exampleIntent,
  optionsFromEnvironment,
  type ExamplePolicy,
  type PreflightExampleOptions,
} from './preflight';

export interface EscalationExampleOptions extends PreflightExampleOptions {
  /** Told the pollRef as soon as the escalation exists (to show it to a person, say). */
  readonly onEscalated?: (pollRef: string) => void;
}

export async function escalationExample(options: EscalationExampleOptions) {
  const agent = exampleAgent(options);
  const policy: ExamplePolicy = options.policy;
  const intent = exampleIntent(policy, options.amountAtomic ?? 1_500_000n);
  const first = await agent.preflight(policy.policyId, intent);
  if (!first.decision.startsWith('ESCALATED_') || first.escalation === undefined)
    return { first, escalation: null, second: null };
  options.onEscalated?.(first.escalation.pollRef);
  const escalation = await agent.waitForEscalation(first.escalation.pollRef);
  if (escalation.state !== 'APPROVED') return { first, escalation, second: null };
  const second = await agent.preflight(policy.policyId, intent);
  return { first, escalation, second };
}

if (require.main === module) {
  escalationExample({
    ...optionsFromEnvironment(),
    onEscalated: (pollRef) => console.log(`waiting for the owner: ${pollRef}`),
  }).then(
    (result) =>
      console.log(result.second?.decision ?? result.escalation?.state ?? result.first.decision),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
