// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * Lint rules checked by `npm run lint` inside `npm test`. Type-aware where it is cheap and catches real bugs
 * (promises nobody awaits, awaits of non-promises); the layer rules are dependency-cruiser's
 * (.dependency-cruiser.cjs); formatting is Prettier's.
 */
export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'web/**', 'fixtures/**', 'test/fixtures/**', 'src/mcp/apps/*.view.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-control-regex': 'off',
      eqeqeq: ['error', 'always'],
      'no-duplicate-imports': 'off',
      'prefer-const': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      // A file past ~250 lines of code is doing a second job (CONTRIBUTING.md): split it by job.
      'max-lines': ['error', { max: 200, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['warn', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // A projection's apply is one short case per event type it reads: it grows with the domain's events,
    // not with a second job, so it is held to the file's size only.
    files: ['src/projections/*.ts'],
    rules: { 'max-lines-per-function': ['warn', { max: 130, skipBlankLines: true, skipComments: true }] },
  },
  {
    // Tests read JSON bodies of many shapes and assert on them field by field; `any` there is the honest type
    // (a wrong field fails the assertion). Production code stays without it.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false },
      globals: {
        process: 'readonly',
        console: 'readonly',
        require: 'readonly',
        module: 'writable',
        URL: 'readonly',
        Buffer: 'readonly',
      },
    },
  },
);
