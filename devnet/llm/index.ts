// The devnet stand-in for an OpenAI-compatible language model: for tests and local runs only.
export {
  DEFAULT_STAND_IN_API_KEY,
  LLM_FAULT_ANSWERS,
  NO_LLM_FAULTS,
  startDevnetLlm,
  type DevnetLlm,
  type LlmFaultAnswer,
  type LlmFaults,
  type LlmRequestSeen,
  type LlmStandInOptions,
} from './server';
export { standInNames } from './names';
