// Jest runs TypeScript through ts-jest in transpile-only mode (isolatedModules); the type check is
// the separate `tsc` build that `npm test` runs first (pretest). jose ships ESM only, which jest's
// CommonJS runtime cannot load: its .js files alone are rewritten to CommonJS (cached like the rest).
import type { Config } from 'jest';

const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/.data/'],
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.data/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    '/node_modules/jose/.+\\.js$': '<rootDir>/test/esm-to-commonjs.cjs',
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  // The agent SDK's examples import it by its package name; tests run its source.
  moduleNameMapper: { '^@spend-control/agent$': '<rootDir>/sdk/src/index.ts' },
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  // Three workers on the machine's two cores: the end-to-end files spend much of their time waiting
  // (for chains, receipts, timeouts), so a third keeps the cores busy. Measured 2026-11-30 on the
  // whole suite: 724 s with two workers, 505 s with three, every test passing (docs/operations.md,
  // "Tests").
  maxWorkers: 3,
  testTimeout: 60_000,
};

export default config;
