// scripts/leftover-processes.ts, the end of `npm test`: it names a process of the run left alive, and only that.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runTestProcess, startTestProcess, TEST_RUN_MARKER } from './support/processes';

/** The check for test run `run`, given `waitMs` for processes that are stopping. */
const check = (run: string, extra: string[] = [], env: NodeJS.ProcessEnv = process.env) =>
  runTestProcess(
    process.execPath,
    ['--import', 'tsx', 'scripts/leftover-processes.ts', '--after', 'the unit test', '--wait-ms', '300', ...extra],
    { env: { ...env, [TEST_RUN_MARKER]: run } },
  );

/** A process of test run `run` that would outlive it: a sleep of five minutes. */
const leak = (run: string) =>
  startTestProcess('sleep', 'sleep', ['300'], { env: { ...process.env, [TEST_RUN_MARKER]: run }, output: 'ignore' });

describe('the leftover-process check (scripts/leftover-processes.ts)', () => {
  it('fails naming a process of the run still alive (pid and command line), and passes once it is stopped', async () => {
    const run = `leftover-test-${randomUUID()}`;
    const sleeper = leak(run);
    const leaked = await check(run);
    expect(leaked.code).toBe(1);
    expect(leaked.stderr).toContain(`of test run ${run} still alive 300 ms after the unit test ended`);
    expect(leaked.stderr).toMatch(new RegExp(`^  pid ${sleeper.pid} \\(parent \\d+\\): sleep 300$`, 'm'));
    // Named, not killed, without --kill.
    expect(sleeper.running).toBe(true);

    await sleeper.kill();
    const clean = await check(run);
    expect(clean.stderr).toBe('');
    expect(clean.stdout).toContain(`none of test run ${run} is alive after the unit test`);
    expect(clean.code).toBe(0);
  });

  it('with --kill, kills what it names', async () => {
    const run = `leftover-test-${randomUUID()}`;
    const sleeper = leak(run);
    const leaked = await check(run, ['--kill']);
    expect(leaked.code).toBe(1);
    expect(leaked.stderr).toContain(`pid ${sleeper.pid} `);
    const killed = await sleeper.exited;
    expect([killed.code, killed.signal]).toEqual([null, 'SIGKILL']);
  });

  it('counts neither itself nor processes of other runs, and waits for one that is stopping', async () => {
    const run = `leftover-test-${randomUUID()}`;
    const other = leak(`another-${run}`);
    // Exits by itself 1 s into the check's 3 s wait.
    const stopping = startTestProcess('sleep', 'sleep', ['1'], {
      env: { ...process.env, [TEST_RUN_MARKER]: run },
      output: 'ignore',
    });
    const result = await runTestProcess(
      process.execPath,
      ['--import', 'tsx', 'scripts/leftover-processes.ts', '--wait-ms', '3000'],
      { env: { ...process.env, [TEST_RUN_MARKER]: run } },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const stopped = await stopping.exited;
    expect([stopped.code, stopped.signal]).toEqual([0, null]);
    expect(other.running).toBe(true);
  });

  it('refuses to run without a run id', async () => {
    const result = await runTestProcess(process.execPath, [
      '--import',
      'tsx',
      'scripts/leftover-processes.ts',
      '--run',
      '',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('give --run <id>');
  });
});
