// How a bench script ends: its stack trace and exit code 1 when it fails; with runBenchMain, the
// code its main returns (0 when it returns nothing) when it completes.

/** The rejection handler of a bench's main: prints the stack under the bench's name, exits 1. */
export function benchFailed(name: string): (error: unknown) => never {
  return (error) => {
    process.stderr.write(
      `${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  };
}

/** Runs a bench's main and exits with its code, so lingering handles cannot keep the process up. */
export function runBenchMain(name: string, main: () => Promise<number | void>): void {
  main().then((code) => process.exit(typeof code === 'number' ? code : 0), benchFailed(name));
}
