// ESLint flat config: typescript-eslint's recommended rules plus the house limits that keep a
// module and a function short enough to read whole (docs/architecture.md, "Quality gates").
// Tests and generated files are exempt from the length limits only.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const TESTS = ['**/*.test.ts', 'test/**/*.ts', '**/test-support.ts', '**/test-support/**/*.ts'];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'sdk/dist/**',
      'node_modules/**',
      '.data/**',
      'coverage/**',
      'contracts/artifacts/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 70, IIFEs: true }],
      // `_name` marks a parameter a signature needs but the body does not (express's `next`).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Input validation here matches control characters on purpose, to refuse them.
      'no-control-regex': 'off',
    },
  },
  {
    files: TESTS,
    rules: {
      'max-lines': 'off',
      'max-lines-per-function': 'off',
      // Tests read untyped wire bodies; production code may not.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
