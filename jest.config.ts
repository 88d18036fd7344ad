// Jest runs TypeScript through ts-jest in transpile-only mode (isolatedModules); the type check is
// the separate `tsc` build that `npm test` runs first (pretest).
import type { Config } from 'jest';

const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/.data/'],
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.data/'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  maxWorkers: 2,
  testTimeout: 60_000,
};

export default config;
