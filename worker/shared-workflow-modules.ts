import path from 'node:path';
import { fileURLToPath } from 'node:url';

// lib/ beside the sources (tsx, vitest), dist/lib/ beside the compiled worker: no extension, the bundler
// resolves .ts or .js.
const libDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../lib');

/**
 * Modules of the workflow bundle evaluated once per worker and shared by every workflow run, instead of
 * once per run (the SDK's reusable V8 context gives each run its own copy of every other module, see
 * `preloadModules` in @temporalio/worker). They are the pure lib/ modules workflows/ imports as values;
 * what they import is shared with them, notably zod: the node data schemas and zod itself were most of
 * what a cached journey run held (docs/operations.md#sizing-the-workers-memory). The SDK runs them before any
 * workflow exists and deep-freezes what they export: each must keep no state, use no workflow API, and
 * export no zod schema (a frozen one fails its lazy set-up on first parse; lib/journeys/node-data.ts keeps
 * its schemas private). test/shared-workflow-modules.test.ts checks all of this against workflows/.
 */
export const SHARED_WORKFLOW_MODULES: readonly string[] = [
  'error-codes',
  'campaigns/campaign-transitions',
  'exports/export-jobs',
  'calls/call-aftermath',
  'calls/call-outcomes',
  'dial-ladder/ladder-rules',
  'journeys/awaiting',
  'journeys/conditions',
  'journeys/node-data',
  'journeys/render',
  'journeys/render-json',
  'journeys/run-statuses',
  'temporal/patches',
  'temporal/refusal',
  'temporal/retry-policies',
].map((module) => path.join(libDir, module));
