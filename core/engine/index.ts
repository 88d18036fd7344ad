// The engine's public surface: evaluate a spend, compile a policy ahead of time, explain a
// decision, the decision codes and approval notes, and the engine identity. Everything here is
// pure and safe to call on any thread.
export { evaluate } from './evaluate';
export { compilePolicy, PolicyCompileError, type CompiledPolicy } from './compile';
export { approvalNote, parseApprovalNote } from './decisionCodes';
export { explainDecision, type ExplainAsset } from './explain';
export { ENGINE_INFO, ENGINE_VERSION, RULE_COUNT, RULE_MANIFEST_HASH, RULES } from './manifest';
export { MAX_RECENT_APPROVED } from './input-checks';
export * from './types';
