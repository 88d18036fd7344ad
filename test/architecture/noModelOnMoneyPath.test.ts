// No language model on a money path: from every source file of the engine and the payment paths,
// the import graph must reach neither the model client (platform/llm) nor its stand-in
// (devnet/llm) nor any model SDK package, so no model answer can influence a decision or a payment.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import {
  chainTo,
  REPO_ROOT,
  reachedFiles,
  sourceFiles,
  walkImports,
  type ImportGraph,
} from './importGraph';

/**
 * The engine and the payment paths (preflight, reservations, settlement, the x402 paywall, the REST
 * layer that prices and pays routes, the builder's priced routes included, the ledger).
 */
const MONEY_PATH_ROOTS = [
  'core/engine',
  'gateway/x402',
  'gateway/rest',
  'subgraphs/intent',
  'subgraphs/ledger',
] as const;
const MODEL_DIRS = ['platform/llm/', 'devnet/llm/'] as const;
/** Model SDKs; a scope ending in "/" stands for every package in it. */
const MODEL_PACKAGES = [
  'openai',
  '@anthropic-ai/',
  'ai',
  '@ai-sdk/',
  'langchain',
  '@langchain/',
  'ollama',
  '@google/generative-ai',
  '@google/genai',
  '@mistralai/',
  'cohere-ai',
  'groq-sdk',
  'together-ai',
  'replicate',
  '@huggingface/',
  'llamaindex',
] as const;

function isModelPackage(name: string): boolean {
  return MODEL_PACKAGES.some((entry) =>
    entry.endsWith('/') ? name.startsWith(entry) : name === entry,
  );
}

/** Each way the graph reaches a model, as a readable import chain. */
function modelReaches(graph: ImportGraph): string[] {
  const problems: string[] = [];
  for (const path of graph.parentOf.keys()) {
    const file = relative(REPO_ROOT, path);
    if (MODEL_DIRS.some((dir) => file.startsWith(dir)))
      problems.push(chainTo(graph, path).join(' → '));
  }
  for (const [name, importers] of graph.packages) {
    if (isModelPackage(name))
      for (const importer of importers)
        problems.push([...chainTo(graph, importer), name].join(' → '));
  }
  return problems.sort();
}

describe('no language model on a money path (from the import graph)', () => {
  const entries = MONEY_PATH_ROOTS.flatMap((root) => sourceFiles(resolve(REPO_ROOT, root)));
  const graph = walkImports(entries);

  it('walks every source file of the engine and the payment paths', () => {
    for (const root of MONEY_PATH_ROOTS)
      expect(entries.some((entry) => relative(REPO_ROOT, entry).startsWith(`${root}/`))).toBe(true);
    expect(reachedFiles(graph)).toEqual(
      expect.arrayContaining([
        'core/engine/evaluate.ts',
        'gateway/x402/paywall.ts',
        'subgraphs/intent/preflight/dispatch.ts',
        'subgraphs/intent/reservations/consumeOrRelease.ts',
        'subgraphs/ledger/posting/writes.ts',
        // The builder's route table and its input readers sit on the paid path; the subgraph kit
        // carries the name model only by its port in core, never the client.
        'gateway/rest/routes/builder.ts',
        'subgraphs/builder/index.ts',
        'subgraphs/kit/types.ts',
        'core/builder/nameModel.ts',
      ]),
    );
    expect(graph.unfollowed).toEqual([]);
  });

  it('reaches neither platform/llm, devnet/llm nor a model SDK', () => {
    expect(modelReaches(graph)).toEqual([]);
  });

  it('would catch a model reached through a chain of imports, or a model SDK (checked on temporary modules)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'money-path-'));
    try {
      const llm = relative(dir, resolve(REPO_ROOT, 'platform/llm')).split('\\').join('/');
      writeFileSync(
        join(dir, 'payment.ts'),
        "import { quote } from './pricing';\nexport const pay = quote;\n",
      );
      writeFileSync(
        join(dir, 'pricing.ts'),
        `import type { LlmClient } from '${llm}';\nexport const quote = (client: LlmClient) => client.model;\n`,
      );
      writeFileSync(
        join(dir, 'sdk.ts'),
        "import OpenAI from 'openai';\nexport const sdk = OpenAI;\n",
      );
      const found = modelReaches(walkImports([join(dir, 'payment.ts'), join(dir, 'sdk.ts')]));
      expect(found).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/payment\.ts → .*pricing\.ts → platform\/llm\/index\.ts$/),
          expect.stringMatching(/sdk\.ts → openai$/),
        ]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
