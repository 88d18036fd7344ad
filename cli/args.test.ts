// The CLI's argument parsing as a specification: util.parseArgs underneath, refusals worded as the
// CLI has always worded them.
import { parseCommandArgs, parseStartArgs, UsageError } from './args';

const refusal = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error('expected a UsageError');
};

describe('spend-control start arguments', () => {
  it('defaults to every role in one process, in-process transport', () => {
    expect(parseStartArgs([])).toEqual({ role: 'all', transport: 'in-process' });
  });

  it('reads --role and --transport in any order', () => {
    expect(parseStartArgs(['--transport', 'http', '--role', 'ledger'])).toEqual({
      role: 'ledger',
      transport: 'http',
    });
  });

  it('refuses unknown options and stray arguments by name', () => {
    expect(refusal(() => parseStartArgs(['--port', '1']))).toBe('unknown option --port');
    expect(refusal(() => parseStartArgs(['-r', 'all']))).toBe('unknown option -r');
    expect(refusal(() => parseStartArgs(['all']))).toBe('unknown option all');
  });

  it('refuses an option without its value', () => {
    expect(refusal(() => parseStartArgs(['--role']))).toBe('--role needs a value');
    expect(refusal(() => parseStartArgs(['--role', '--transport', 'http']))).toBe(
      '--role needs a value',
    );
  });

  it('refuses a role or transport it does not know', () => {
    expect(refusal(() => parseStartArgs(['--role', 'everything']))).toMatch(
      /^--role must be one of all, gateway, worker, /,
    );
    expect(refusal(() => parseStartArgs(['--transport', 'tcp']))).toBe(
      '--transport must be in-process or http',
    );
  });
});

describe('parseCommandArgs', () => {
  it('takes positionals only when the command allows them', () => {
    expect(parseCommandArgs(['0xabc', '5'], {}, true).positionals).toEqual(['0xabc', '5']);
    expect(refusal(() => parseCommandArgs(['0xabc'], {}))).toBe('unknown option 0xabc');
  });
});
