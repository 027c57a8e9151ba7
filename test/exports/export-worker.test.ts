import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTestProcess } from '../support/processes';

const projectRoot = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'export-worker-imports-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Every module an entry point's import graph resolves. Without DATABASE_URL the entry stops at its
 * config (exit 78), after its static imports were all loaded and before it connects anywhere.
 */
async function importsOf(entry: string): Promise<string[]> {
  const file = path.join(scratch, `${path.basename(entry)}.txt`);
  const { code } = await runTestProcess(
    process.execPath,
    ['--import', 'tsx', '--import', './test/support/record-imports.mjs', entry],
    {
      cwd: projectRoot,
      env: { PATH: process.env.PATH, RECORD_IMPORTS_FILE: file },
    },
  );
  expect(code).toBe(78);
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((url) => url.replace(`file://${projectRoot}/`, ''));
}

const prismaIn = (urls: string[]) => urls.filter((url) => /generated\/prisma|@prisma\//.test(url));

describe('the export worker process (worker/export-worker.ts)', () => {
  it('loads the export activities, and no Prisma', async () => {
    const urls = await importsOf('worker/export-worker.ts');
    expect(urls).toEqual(
      expect.arrayContaining([
        'worker/create-export-worker.ts',
        'activities/exports/exports.ts',
        'lib/exports/export-rows.ts',
        'lib/sql-pool.ts',
      ]),
    );
    expect(prismaIn(urls)).toEqual([]);
  });

  it('is told apart from the main worker, which loads Prisma (the check can fail)', async () => {
    const urls = await importsOf('worker/main.ts');
    expect(urls).toContain('worker/create-worker.ts');
    expect(prismaIn(urls)).toContain('generated/prisma/client.ts');
  });
});
