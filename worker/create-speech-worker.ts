import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { bindActivities } from '../activities/bind-activities';
import { speechActivities, type SpeechActivityDependencies } from '../activities/speech/speech-analysis';
import { workerStopTimes } from '../lib/shutdown';

export interface SpeechWorkerSetup {
  /** The payload codec under SECRETS_KEYS (lib/temporal/connection.ts temporalSetupOfConfig); unset: plain payloads. */
  dataConverter?: DataConverter;
  connection: NativeConnection;
  namespace: string;
  /** SPEECH_TASK_QUEUE: where analysis workflows send their activities. */
  taskQueue: string;
  /** SPEECH_ANALYSIS_SLOTS: recordings analysed at once by this worker. */
  slots: number;
  dependencies: SpeechActivityDependencies;
  /** SHUTDOWN_GRACE_MS of the process: its drain stays inside it (lib/shutdown.ts); unset, no force time. */
  graceMs?: number;
}

const SPEECH_SHUTDOWN_GRACE_MS = 5_000;

/**
 * An activity-only worker for recording analyses (no workflow sandbox): each analysis runs sox and a
 * recogniser process of about 110 MB and one CPU, so a worker takes only `slots` at once and the rest
 * wait in Temporal's task queue, where they cost nothing. Run inside the main worker process
 * (worker/main.ts) beside the workflow worker; a machine given over to analysis runs more of them.
 */
export function createSpeechWorker(setup: SpeechWorkerSetup): Promise<Worker> {
  return Worker.create({
    connection: setup.connection,
    namespace: setup.namespace,
    taskQueue: setup.taskQueue,
    dataConverter: setup.dataConverter,
    activities: bindActivities(setup.dependencies, speechActivities),
    maxConcurrentActivityTaskExecutions: setup.slots,
    // The bookkeeping activities (mark failed, bill) share the slots; an analysis cut short by shutdown
    // is retried by another worker from the start, as its heartbeat stops.
    ...(setup.graceMs === undefined
      ? { shutdownGraceTime: SPEECH_SHUTDOWN_GRACE_MS }
      : workerStopTimes(setup.graceMs, SPEECH_SHUTDOWN_GRACE_MS)),
  });
}
