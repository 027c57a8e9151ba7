import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Each file's seconds in a full run of this machine (`npm run test:file-seconds` writes it from the last run's report). */
export const FILE_SECONDS_PATH = path.resolve(import.meta.dirname, 'file-seconds.json');

/** A file the list does not know yet (new since it was written) is taken as a short one. */
const UNKNOWN_FILE_SECONDS = 5;

/**
 * The slowest files first, by the seconds of the last measured run, so that no long file starts last and runs alone
 * while the other workers have nothing left (vitest's own order needs its cache, which a fresh clone has not).
 */
export class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = JSON.parse(readFileSync(FILE_SECONDS_PATH, 'utf8')) as Record<string, number>;
    const root = path.resolve(import.meta.dirname, '../..');
    const of = (file: TestSpecification) =>
      seconds[path.relative(root, file.moduleId).split(path.sep).join('/')] ?? UNKNOWN_FILE_SECONDS;
    const ordered = await super.sort(files);
    // Array.prototype.sort is stable: files of equal seconds keep vitest's order.
    return ordered.sort((a, b) => of(b) - of(a));
  }
}
