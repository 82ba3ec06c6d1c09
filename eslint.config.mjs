// ESLint flat config. TypeScript gets typescript-eslint's type-aware recommended rules, each file checked against
// the tsconfig that builds it (host, engine, CLI, tools and unit tests; the VS Code integration suite; the
// webview). The plain JavaScript harness (esbuild script, E2E tests, packaging) gets ESLint's recommended rules.
// Run: npm run lint (CI runs it before the tests).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'out/',
      'dist/',
      'vsix/',
      'test-results/',
      'bench-results/',
      '.cache/',
      'test/e2e/code-server/',
      'tools/train-default-model/work/',
    ],
  },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },

  js.configs.recommended,
  {
    files: ['**/*.mjs'],
    languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: globals.node },
    rules: {
      // `catch { /* why */ }` is how the harness says "best effort"; an empty block anywhere else is a bug.
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    // Functions passed to Playwright's page.evaluate run in the browser.
    files: ['test/e2e/**/*.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
  {
    // The E2E's probe extension (test/e2e/host-probe): a CommonJS module run by the extension host.
    files: ['test/e2e/host-probe/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
  },

  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.json', './tsconfig.suite.json', './webview/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // The VS Code API returns Thenables, not Promises: an ignored showErrorMessage or executeCommand is as
          // lost as an ignored promise (its rejection goes nowhere).
          checkThenables: true,
          // node:test's test()/describe() return promises the runner itself awaits.
          allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // An async function without await is how an API promises to reject instead of throwing (and what
      // VS Code's Thenable-returning hooks expect); dropping `async` would change that contract.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Browser code: the webview.
    files: ['webview/**/*.ts', 'webview/**/*.tsx'],
    languageOptions: { globals: globals.browser },
  },
  {
    // Tests parse JSON written by the CLI and by Hugging Face's reference scripts and assert its shape field by
    // field; typing that JSON up front would only restate the assertions. Everything else stays on.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
