import { BENCHMARKS, readSelection } from './selection';

const names = (selection: ReturnType<typeof readSelection>) =>
  'problem' in selection ? selection.problem : selection.selected.map((bench) => bench.name);

describe('npm run bench: which benchmarks run, with which arguments', () => {
  it('runs every benchmark, without arguments, when nothing is named', () => {
    const selection = readSelection([]);
    expect(names(selection)).toEqual(BENCHMARKS.map((bench) => bench.name));
    expect(selection).toMatchObject({ args: [] });
  });

  it('hands the words after one named benchmark to it (npm run bench:consumer -- 20 8)', () => {
    const selection = readSelection(['consumer', '20', '8', 'inline']);
    expect(names(selection)).toEqual(['consumer']);
    expect(selection).toMatchObject({ args: ['20', '8', 'inline'] });
  });

  it('runs several named benchmarks in the table order, without arguments', () => {
    const selection = readSelection(['growth', 'x402']);
    expect(names(selection)).toEqual(['x402', 'growth']);
    expect(selection).toMatchObject({ args: [] });
  });

  it('refuses an unknown name instead of running everything with it as an argument', () => {
    expect(names(readSelection(['consumr']))).toBe(
      `unknown benchmark "consumr"; choose from ${BENCHMARKS.map((bench) => bench.name).join(', ')}`,
    );
  });

  it('refuses arguments after two names: they would mean different things to each', () => {
    expect(names(readSelection(['x402', 'growth', '5']))).toBe(
      'arguments "5" go to one benchmark, not to x402, growth',
    );
  });
});
