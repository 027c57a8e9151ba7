// lib/shutdown.ts in a process of its own (test/support/stopping-process.ts): what every entry point does on
// SIGTERM and SIGINT (docs/operations-stopping.md).
import { describe, expect, it } from 'vitest';
import { workerStopTimes } from '../lib/shutdown';
import { startEntryPoint } from './support/processes';
import { logLines, STOP_MARGIN_MS, stopBySignal, waitForOutput } from './support/stopping';

const GRACE_MS = 2_000;

async function startStopping(steps: string, env: Record<string, string> = {}) {
  const started = startEntryPoint('test/support/stopping-process.ts', {
    SHUTDOWN_GRACE_MS: String(GRACE_MS),
    STOP_STEPS: steps,
    ...env,
  });
  await waitForOutput(started, '"msg":"ready"');
  return started;
}

const stepsStarted = (lines: Array<Record<string, unknown>>) =>
  lines.filter((line) => line.msg === 'step started').map((line) => line.step);

describe('a process stopped by a signal (lib/shutdown.ts)', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'on %s runs every step, the last registered first, then exits 0',
    async (signal) => {
      const stopping = await startStopping('tracing:ms50,database:ms50,server:ms50');
      const { code, ms } = await stopBySignal(stopping, signal, GRACE_MS + STOP_MARGIN_MS);
      expect(code).toBe(0);
      expect(ms).toBeLessThan(GRACE_MS + STOP_MARGIN_MS);
      const lines = logLines(stopping);
      expect(stepsStarted(lines)).toEqual(['server', 'database', 'tracing']);
      expect(lines.filter((line) => line.msg === 'step finished')).toHaveLength(3);
      expect(lines.find((line) => line.msg === 'stopping')).toMatchObject({ reason: signal, graceMs: GRACE_MS });
      expect(lines.find((line) => line.msg === 'stopped')).toMatchObject({ exitCode: 0 });
    },
  );

  it('exits 70 once the grace period is over when a step never finishes, naming it and the steps not started', async () => {
    const stopping = await startStopping('database:ms10,stuck:hang,server:ms10');
    const { code, ms } = await stopBySignal(stopping, 'SIGTERM', GRACE_MS + STOP_MARGIN_MS);
    expect(code).toBe(70);
    // The deadline counts from the signal, which reached the process after it was sent.
    expect(ms).toBeGreaterThanOrEqual(GRACE_MS);
    expect(ms).toBeLessThan(GRACE_MS + STOP_MARGIN_MS);
    const lines = logLines(stopping);
    expect(stepsStarted(lines)).toEqual(['server', 'stuck']);
    expect(lines.find((line) => line.level === 'error')).toMatchObject({
      msg: `stop did not finish within ${GRACE_MS} ms (stuck, database): exiting 70`,
      unfinished: ['stuck', 'database'],
    });
  });

  it('goes on after a step that fails, and exits 1', async () => {
    const stopping = await startStopping('database:ms10,broken:throw,server:ms10');
    const { code } = await stopBySignal(stopping, 'SIGTERM', GRACE_MS + STOP_MARGIN_MS);
    expect(code).toBe(1);
    const lines = logLines(stopping);
    expect(stepsStarted(lines)).toEqual(['server', 'broken', 'database']);
    expect(lines.find((line) => line.level === 'error')).toMatchObject({
      msg: 'stop step failed: broken',
      err: { message: 'broken failed' },
    });
  });

  it('exits at once on a second signal: 143 after SIGTERM, 130 after SIGINT', async () => {
    // A grace period far longer than the margin: exiting at its end would fail the test.
    const longGrace = { SHUTDOWN_GRACE_MS: String(6 * STOP_MARGIN_MS) };
    for (const [signal, exitCode] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const) {
      const stopping = await startStopping('stuck:hang', longGrace);
      stopping.send('SIGTERM');
      await waitForOutput(stopping, '"msg":"step started"');
      const { code, ms } = await stopBySignal(stopping, signal, STOP_MARGIN_MS);
      expect(code).toBe(exitCode);
      expect(ms).toBeLessThan(STOP_MARGIN_MS);
      expect(logLines(stopping).find((line) => line.level === 'warn')).toMatchObject({
        msg: `second stop signal: exiting ${exitCode} at once`,
      });
    }
  });

  it('keeps the exit code the process set for an orderly stop', async () => {
    const stopping = await startStopping('server:ms10', { EXIT_CODE: '3' });
    expect((await stopBySignal(stopping, 'SIGTERM', GRACE_MS + STOP_MARGIN_MS)).code).toBe(3);
  });

  it('refuses a SHUTDOWN_GRACE_MS that is not a number of milliseconds, naming it (exit 78)', async () => {
    const started = startEntryPoint('test/support/stopping-process.ts', { SHUTDOWN_GRACE_MS: 'soon' });
    expect((await started.exited).code).toBe(78);
    expect(started.output().trim()).toMatch(/^config: SHUTDOWN_GRACE_MS is invalid: /);
  });
});

describe('the Temporal workers drain inside the grace period (workerStopTimes)', () => {
  it('gives activities at most half of it, and gives up on the drain at three quarters', () => {
    expect(workerStopTimes(8_000)).toEqual({ shutdownGraceTime: 0, shutdownForceTime: 6_000 });
    expect(workerStopTimes(8_000, 10_000)).toEqual({ shutdownGraceTime: 4_000, shutdownForceTime: 6_000 });
    expect(workerStopTimes(25_000, 10_000)).toEqual({ shutdownGraceTime: 10_000, shutdownForceTime: 18_750 });
  });
});
