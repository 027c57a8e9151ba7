import { defineConfig } from 'vitest/config';
import { SlowestFirstSequencer } from './test/setup/slowest-first';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/global-setup.ts'],
    // Stops, at the end of each file, the processes its tests started outside any test (test/support/processes.ts).
    setupFiles: ['test/setup/processes.ts'],
    // The Temporal worker's native bridge belongs in a process of its own, not a worker thread.
    pool: 'forks',
    // One process per worker for all its files, not one per file: a file's imports (the API, Prisma, the Temporal
    // client, the twins) load once per process instead of once per file, about two thirds of a short file's time. No
    // test changes the environment or mocks a module, and each file makes its own database, app and workers.
    isolate: false,
    // Three files at once on two CPUs: most of the long files wait (on processes they killed and started again, on
    // calls played at a tenth of real time, on timers), so a third keeps the CPUs busy while they do (docs/testing.md#where-the-time-goes).
    maxWorkers: 3,
    // The slowest files first (test/setup/file-seconds.json), so that none starts last and runs alone.
    sequence: { sequencer: SlowestFirstSequencer },
    // Processes the tests start (workers, the API, the compiled build) inherit these: no metrics port is
    // bound unless a test asks for one, so parallel processes never contend for 9464-9467.
    env: {
      METRICS_PORT: 'off',
      WORKER_METRICS_PORT: 'off',
      WORKER_SDK_METRICS_PORT: 'off',
      EXPORT_WORKER_SDK_METRICS_PORT: 'off',
      // The receivers of journey and result webhooks listen on loopback, over http (lib/http/egress.ts
      // LOOPBACK_ALLOWANCES); a test of the production guard builds its own.
      EGRESS_ALLOW_HTTP: 'true',
      EGRESS_ALLOW_ADDRESSES: '127.0.0.0/8,::1/128',
      // The simulated carrier and WhatsApp provider stand in for numbers and senders bound to no connection, charged as
      // real providers are so that billing is exercised through them (docs/configuration.md#simulators); the tests of
      // the production default (disabled) set their own.
      SIMULATORS: 'billed',
    },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // The JSON report feeds the one-line summary scripts/test.sh prints last.
    // `npm run test:cluster` writes its own (VITEST_JSON), so that `npm test` can print both.
    reporters: ['default', ['json', { outputFile: process.env.VITEST_JSON ?? '.test-results/vitest.json' }]],
  },
});
