// The launch pack's services for a process: the name model when LLM_* are configured (its key
// stays inside the client), and the TLDs checked by default: BUILDER_DEFAULT_TLDS, else on the
// embedded devnet the devnet registry's TLDs (so checks get real answers), else com, io, ai.
import type { Config } from '../platform/config';
import { createLlmClient } from '../platform/llm';
import { DEVNET_RDAP_TLDS } from '../devnet/rdap/names';
import { DEFAULT_BUILDER_TLDS } from '../subgraphs/builder';
import type { BuilderServices } from '../subgraphs/kit';

export function prepareBuilder(options: {
  config: Config['builder'];
  /** The devnet RDAP registry answers this process's lookups. */
  devnetRegistry: boolean;
  out: (line: string) => void;
}): BuilderServices {
  const { config, out } = options;
  const nameModel = config.llm === null ? null : createLlmClient(config.llm);
  const defaultTlds =
    config.defaultTlds ?? (options.devnetRegistry ? DEVNET_RDAP_TLDS : DEFAULT_BUILDER_TLDS);
  out(
    `builder         names from ${nameModel === null ? 'the fallback generator (no LLM_API_KEY)' : `model ${nameModel.model}`}; default TLDs ${defaultTlds.join(', ')}`,
  );
  return { nameModel, defaultTlds };
}
