import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../lib/config';
import { cachedWorkflowsForHeap, maxOldSpaceSizeMb } from '../worker/workflow-cache-size';
import { execTestProcess } from './support/processes';

const MB = 2 ** 20;

describe('the worker cache follows the heap limit', () => {
  it('fits 1 MB per cached execution above a 200 MB base, and never fewer than 10', () => {
    expect(cachedWorkflowsForHeap(4144 * MB)).toBe(3944);
    expect(cachedWorkflowsForHeap(816 * MB)).toBe(616);
    expect(cachedWorkflowsForHeap(1200 * MB)).toBe(1000);
    expect(cachedWorkflowsForHeap(205 * MB)).toBe(10);
    expect(cachedWorkflowsForHeap(150 * MB)).toBe(10);
  });

  it('reads the limit a process was started with (--max-old-space-size)', async () => {
    const script =
      "import('./worker/workflow-cache-size').then(({ cachedWorkflowsForThisProcess }) => console.log(cachedWorkflowsForThisProcess()))";
    const run = (flags: string[]) =>
      execTestProcess(process.execPath, [...flags, '--import', 'tsx', '-e', script], {
        cwd: path.resolve(import.meta.dirname, '..'),
      });
    const limited = Number((await run(['--max-old-space-size=768'])).stdout);
    const larger = Number((await run(['--max-old-space-size=2048'])).stdout);
    expect(limited).toBeGreaterThan(560);
    expect(limited).toBeLessThan(640);
    expect(larger).toBeGreaterThan(limited * 2);
  });

  it('reads --max-old-space-size from the command line, else NODE_OPTIONS; not from the heap limit', () => {
    expect(maxOldSpaceSizeMb(['--max-old-space-size=768'])).toBe(768);
    expect(maxOldSpaceSizeMb([], '--enable-source-maps --max_old_space_size=384')).toBe(384);
    expect(maxOldSpaceSizeMb(['--max-old-space-size=1024'], '--max-old-space-size=384')).toBe(1024);
    expect(maxOldSpaceSizeMb(['--import', 'tsx'], '--max-semi-space-size=16')).toBeUndefined();
  });

  it('is the default only while WORKER_MAX_CACHED_WORKFLOWS is unset', () => {
    const base = { DATABASE_URL: 'postgresql://user@127.0.0.1:5432/app' };
    expect(parseConfig(base).WORKER_MAX_CACHED_WORKFLOWS).toBeUndefined();
    expect(parseConfig({ ...base, WORKER_MAX_CACHED_WORKFLOWS: '250' }).WORKER_MAX_CACHED_WORKFLOWS).toBe(250);
    expect(() => parseConfig({ ...base, WORKER_MAX_CACHED_WORKFLOWS: 'lots' })).toThrow(
      /^config: WORKER_MAX_CACHED_WORKFLOWS is invalid/,
    );
  });
});
