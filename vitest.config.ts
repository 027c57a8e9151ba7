import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/global-setup.ts'],
    // The Temporal worker's native bridge belongs in a process of its own, not a worker thread.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The JSON report feeds the one-line summary scripts/test.sh prints last.
    // `npm run test:cluster` writes its own (VITEST_JSON), so that `npm test` can print both.
    reporters: ['default', ['json', { outputFile: process.env.VITEST_JSON ?? '.test-results/vitest.json' }]],
  },
});
