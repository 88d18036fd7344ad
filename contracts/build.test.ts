// The committed artifacts are exactly what the pinned compiler makes from contracts/src today:
// editing a .sol file (or bumping solc/OpenZeppelin) without `npm run contracts:build` fails here.
import fs from 'node:fs';
import path from 'node:path';
import { type CompiledContracts, compileContracts } from './build';
import { projectRoot } from '../platform/paths';

describe('contracts build', () => {
  const artifactsDir = path.join(projectRoot(), 'contracts', 'artifacts');
  let compiled: CompiledContracts;

  beforeAll(() => {
    compiled = compileContracts();
  });

  it('recompiles to byte-identical committed files', () => {
    const stale: string[] = [];
    for (const [file, content] of compiled.files) {
      const committedPath = path.join(projectRoot(), file);
      const committed = fs.existsSync(committedPath) ? fs.readFileSync(committedPath) : null;
      if (committed === null || !committed.equals(Buffer.from(content, 'utf8'))) stale.push(file);
    }
    // Run `npm run contracts:build` and commit the result when this lists files.
    expect(stale).toEqual([]);
  });

  it('leaves no stale file in contracts/artifacts', () => {
    const expected = [...compiled.files.keys()].map((file) => path.basename(file)).sort();
    expect(fs.readdirSync(artifactsDir).sort()).toEqual(expected);
  });

  it('builds the EIP-3009 token for cancun with the 200-run optimizer', () => {
    const token = compiled.artifacts.Eip3009Token;
    expect(token.evmVersion).toBe('cancun');
    expect(token.settings).toEqual({
      evmVersion: 'cancun',
      optimizer: { enabled: true, runs: 200 },
    });
    expect(token.compiler.version).toMatch(/^0\.8\.37\+/);
    const functionNames = token.abi
      .filter(
        (item): item is { type: string; name: string } =>
          (item as { type: string }).type === 'function',
      )
      .map((item) => item.name);
    expect(functionNames).toEqual(
      expect.arrayContaining([
        'transferWithAuthorization',
        'receiveWithAuthorization',
        'cancelAuthorization',
        'authorizationState',
        'DOMAIN_SEPARATOR',
        'eip712Domain',
        'mint',
        'minter',
      ]),
    );
    expect(Object.keys(token.sourceSha256)).toContain(
      '@openzeppelin/contracts/token/ERC20/ERC20.sol',
    );
  });
});
