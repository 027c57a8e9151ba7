import type { Server } from 'node:http';
import { constants } from 'node:os';
import { log } from './log';

/*
 * How a long-running process stops (docs/operations-stopping.md). On the first SIGTERM or SIGINT it runs its
 * stop steps, the last registered first (a server stops taking work before the pools its requests use are
 * closed), and arms a deadline of SHUTDOWN_GRACE_MS. It then exits explicitly: a socket left open to a
 * dependency that went away (a black-holed PostgreSQL, a Temporal connection retrying) must not keep it
 * alive, as it did before this module, when the entry points waited for the event loop to drain.
 */

/** Every stop step finished, without error, before the deadline (unless the process set process.exitCode). */
export const EXIT_STOPPED = 0;
/** Every stop step ended before the deadline, and at least one of them failed (each failure is logged). */
export const EXIT_STOP_FAILED = 1;
/** The grace period ran out: the log line before the exit names the steps that had not finished. */
export const EXIT_GRACE_EXPIRED = 70;
/** A second stop signal during the stop: 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), at once. */
export const exitCodeOfSignal = (signal: NodeJS.Signals) => 128 + constants.signals[signal];

export const STOP_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

export interface ProcessStop {
  /** Registers what to undo on stop. Steps run one at a time, the last registered first. */
  defer(name: string, step: () => unknown): void;
  /**
   * Starts the stop without a signal (a worker whose run ended on its own): the same steps and deadline,
   * then exitCode (default: process.exitCode, or 0) when every step succeeded. A stop already under way is
   * left as it is.
   */
  stop(reason: string, exitCode?: number): void;
  /** True once the stop has started: work loops can stop taking more. */
  readonly stopping: boolean;
}

export interface StopOptions {
  /** SHUTDOWN_GRACE_MS: from the first signal until the process has exited. */
  graceMs: number;
  signals?: NodeJS.Signals[];
  /** Tests: what is called instead of process.exit. */
  exit?: (code: number) => void;
}

/**
 * Installs the process's stop: call it once, first thing after the configuration is read, so that a signal
 * during start (a connection still being retried) stops the process too.
 */
export function handleStopSignals(options: StopOptions): ProcessStop {
  const { graceMs, signals = STOP_SIGNALS, exit = (code: number) => process.exit(code) } = options;
  const steps: Array<{ name: string; run: () => unknown }> = [];
  let stopping = false;
  let exited = false;
  const finish = (code: number) => {
    if (exited) return;
    exited = true;
    exit(code);
  };

  const begin = (reason: string, exitCode: number | undefined) => {
    stopping = true;
    const startedAt = Date.now();
    let current: string | null = null;
    // The step under way, then those not started, in the order they will run.
    const unfinished = () => [...(current === null ? [] : [current]), ...steps.map((step) => step.name).reverse()];
    log.info({ reason, graceMs, steps: unfinished() }, 'stopping');
    // Not unref'd: whatever hangs, this fires.
    const deadline = setTimeout(() => {
      const names = unfinished();
      log.error(
        { reason, graceMs, unfinished: names },
        `stop did not finish within ${graceMs} ms (${names.join(', ')}): exiting ${EXIT_GRACE_EXPIRED}`,
      );
      finish(EXIT_GRACE_EXPIRED);
    }, graceMs);
    void (async () => {
      let failed = false;
      // Steps deferred while stopping (a connection that was still being made) run too.
      for (let step = steps.pop(); step; step = steps.pop()) {
        current = step.name;
        try {
          await step.run();
        } catch (error) {
          failed = true;
          log.error({ err: error, step: step.name }, `stop step failed: ${step.name}`);
        }
        current = null;
      }
      clearTimeout(deadline);
      const code = failed ? EXIT_STOP_FAILED : (exitCode ?? Number(process.exitCode ?? EXIT_STOPPED));
      log.info({ reason, ms: Date.now() - startedAt, exitCode: code }, 'stopped');
      finish(code);
    })();
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, `second stop signal: exiting ${exitCodeOfSignal(signal)} at once`);
      finish(exitCodeOfSignal(signal));
      return;
    }
    begin(signal, undefined);
  };
  for (const signal of signals) process.on(signal, onSignal);

  return {
    defer(name, run) {
      steps.push({ name, run });
    },
    stop(reason, exitCode) {
      if (!stopping) begin(reason, exitCode);
    },
    get stopping() {
      return stopping;
    },
  };
}

/**
 * Stops an HTTP server: it takes no new connection, kept-alive connections are closed as soon as they are
 * idle, and the requests still in flight after `cutAfterMs` have their connections cut.
 */
export async function stopHttpServer(server: Server, cutAfterMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // A connection whose request ends after close() would otherwise be kept alive for its next one.
  const idle = setInterval(() => server.closeIdleConnections(), 100);
  const cut = setTimeout(() => server.closeAllConnections(), cutAfterMs);
  await closed;
  clearInterval(idle);
  clearTimeout(cut);
}

/**
 * A Temporal worker's own drain, kept inside the process's grace period: in-flight activities get
 * `activityGraceMs` (at most half the period) before they are cancelled, and Worker.run() gives up at three
 * quarters of it (GracefulShutdownPeriodExpiredError), leaving the last quarter to close connections.
 */
export function workerStopTimes(graceMs: number, activityGraceMs = 0) {
  return {
    shutdownGraceTime: Math.min(activityGraceMs, Math.floor(graceMs / 2)),
    shutdownForceTime: Math.floor((graceMs * 3) / 4),
  };
}
