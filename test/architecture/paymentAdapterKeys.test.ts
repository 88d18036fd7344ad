// Execution without keys in the adapter, and no ERC-20 approve anywhere. From the payment
// adapter (and the scheme wrapper it uses), the import graph reaches neither the key store
// (platform/chain/keys.ts, keyFile.ts, devKeys.ts) nor the treasury signer that holds the key:
// the adapter is handed a sign callback, never a key. And no source file calls or encodes an
// ERC-20 `approve` (or `increaseAllowance`): money leaves only by EIP-3009 authorizations.
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { chainTo, REPO_ROOT, reachedFiles, sourceFiles, walkImports } from './importGraph';

const ADAPTER_FILES = [
  'subgraphs/intent/consumer/execution/paymentAdapter.ts',
  'subgraphs/intent/consumer/execution/cappedTimeout.ts',
];
const KEY_HOLDERS = [
  'platform/chain/keys.ts',
  'platform/chain/keyFile.ts',
  'platform/chain/devKeys.ts',
  'platform/chain/treasurySigner.ts',
];

describe('the payment adapter holds no key', () => {
  const graph = walkImports(ADAPTER_FILES.map((file) => resolve(REPO_ROOT, file)));

  it('walks the adapter and what it imports', () => {
    expect(reachedFiles(graph)).toEqual(expect.arrayContaining(ADAPTER_FILES));
    expect([...graph.packages.keys()]).toEqual(
      expect.arrayContaining(['@x402/fetch', '@x402/evm']),
    );
  });

  it('reaches neither the key store nor the treasury signer', () => {
    const reached = [...graph.parentOf.keys()]
      .map((path) => relative(REPO_ROOT, path))
      .filter((file) => KEY_HOLDERS.includes(file))
      .map((file) => chainTo(graph, resolve(REPO_ROOT, file)).join(' → '));
    expect(reached).toEqual([]);
  });
});

/** An ERC-20 allowance call or its ABI, in code (comments and this test's own patterns aside). */
const APPROVE_PATTERNS = [
  /functionName:\s*['"`](approve|increaseAllowance)['"`]/,
  /\.(approve|increaseAllowance)\s*\(/,
  /function\s+(approve|increaseAllowance)\s*\(\s*address/,
  /0x095ea7b3/i, // approve(address,uint256) selector
];

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
}

describe('no ERC-20 approve anywhere', () => {
  const roots = ['core', 'platform', 'subgraphs', 'gateway', 'cli', 'devnet', 'channels', 'bench'];
  const files = roots
    .flatMap((root) => sourceFiles(resolve(REPO_ROOT, root)))
    .filter((file) => !file.endsWith('.test.ts'));

  it('scans the source tree', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.map((file) => relative(REPO_ROOT, file))).toEqual(
      expect.arrayContaining(ADAPTER_FILES),
    );
  });

  it('no source file calls, encodes or declares an allowance approval', () => {
    const offenders = files.flatMap((file) => {
      const code = withoutComments(readFileSync(file, 'utf8'));
      return APPROVE_PATTERNS.filter((pattern) => pattern.test(code)).map(
        (pattern) => `${relative(REPO_ROOT, file)} matches ${pattern}`,
      );
    });
    expect(offenders).toEqual([]);
  });
});
