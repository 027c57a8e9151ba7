// `npm run test:file-seconds`: writes test/setup/file-seconds.json (each test file's seconds, slowest first) from the
// last full run's report, .test-results/vitest.json, for the slowest-first order of the next runs
// (test/setup/slowest-first.ts). Run it after a full `npm test` when files were added or got slower.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FILE_SECONDS_PATH } from '../test/setup/slowest-first';

interface VitestReport {
  testResults: Array<{ name: string; startTime: number; endTime: number }>;
}

const root = path.resolve(import.meta.dirname, '..');
const report = JSON.parse(readFileSync(path.join(root, '.test-results/vitest.json'), 'utf8')) as VitestReport;
const seconds = report.testResults
  .map(
    (file) =>
      [
        path.relative(root, file.name).split(path.sep).join('/'),
        Math.round((file.endTime - file.startTime) / 1000),
      ] as const,
  )
  .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
writeFileSync(FILE_SECONDS_PATH, `${JSON.stringify(Object.fromEntries(seconds), null, 2)}\n`);
console.log(`${seconds.length} files written to ${path.relative(root, FILE_SECONDS_PATH)}`);
