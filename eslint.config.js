// Lint: TypeScript's recommended rules everywhere, and the determinism fence around workflows/.
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = builtinModules.flatMap((name) => [name, `node:${name}`]);

export default tseslint.config(
  { ignores: ['node_modules/**', 'generated/**', 'dist/**', '.data/**', '.tools/**', 'test/lint-fixtures/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // Workflow code is replayed inside Temporal's deterministic sandbox: no Node built-ins, no I/O,
    // and activities only as types (they run in the worker, reached through proxyActivities).
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: [
          ...nodeBuiltins.map((name) => ({ name, message: 'Node built-ins are not deterministic: do this in an activity.' })),
          ...['pg', 'express', '@prisma/client', '@prisma/adapter-pg', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'].map(
            (name) => ({ name, message: 'I/O belongs in activities/, not in workflow code.' }),
          ),
        ],
        patterns: [
          { group: ['**/activities', '**/activities/**'], allowTypeImports: true, message: 'Import activities as types only and call them through proxyActivities.' },
          { group: ['**/generated/**', '**/lib/database', '**/api/**', '**/scripts/**'], message: 'I/O belongs in activities/, not in workflow code.' },
        ],
      }],
      'no-restricted-globals': ['error',
        { name: 'process', message: 'The environment is not deterministic: pass values in as workflow input.' },
        { name: 'fetch', message: 'Network I/O belongs in an activity.' },
        { name: 'require', message: 'Use static imports.' },
      ],
    },
  },
);
