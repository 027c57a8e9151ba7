import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { SpeechActivities } from '../../activities/speech/speech-analysis';
import { ErrorCode } from '../../lib/error-codes';
import { refusalOf } from '../../lib/temporal/refusal';
import type { SpeechAnalysisInput, SpeechAnalysisResult } from '../../lib/speech/speech-analysis';
import { speechAnalysed, untilDatabaseAnswers } from '../../lib/temporal/retry-policies';

/**
 * The recogniser needs up to about half the audio's length in CPU time (a 20-minute recording: 10 minutes
 * on a busy machine); it heartbeats every 5 s, so a worker that dies hands the analysis to another within
 * 30 s. A failure of ours (sox or the recogniser missing or killed) is tried 3 times in all, then the
 * analysis fails: 3 x 30 minutes stay well inside ABANDONED_HOLD_AGE_MS (2 hours), after which the sweep
 * of abandoned holds would take the analysis for dead.
 */
const analysisActivities = (taskQueue: string) =>
  proxyActivities<SpeechActivities>({
    taskQueue,
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '30 seconds',
    retry: speechAnalysed,
  });

/** Writes to PostgreSQL: retried until the database answers. */
const bookkeepingActivities = (taskQueue: string) =>
  proxyActivities<SpeechActivities>({
    taskQueue,
    startToCloseTimeout: '30 seconds',
    retry: untilDatabaseAnswers,
  });

const ERROR_CODES: ReadonlySet<string> = new Set(Object.values(ErrorCode));

/** Why the analysis failed, as a code of lib/error-codes.ts and words: a refusal's own, else internal_error. */
function failureOf(error: unknown): { errorCode: string; errorMessage: string } {
  if (isCancellation(error))
    return { errorCode: ErrorCode.internal_error, errorMessage: 'the analysis was cancelled; nothing was charged' };
  const refusal = refusalOf(error);
  if (refusal?.type && ERROR_CODES.has(refusal.type)) return { errorCode: refusal.type, errorMessage: refusal.message };
  return {
    errorCode: ErrorCode.internal_error,
    errorMessage: 'the analysis failed on our side and was given up after its retries; nothing was charged',
  };
}

/**
 * The analysis of one uploaded recording (docs/features/speech.md): decoded, transcribed and scored by a
 * speech worker, stored, then billed: the hold the API took is posted when the analysis completed,
 * voided when it failed (a refusal of the recording, or a failure of ours past its retries). Cancelled by
 * an operator, it is marked failed and its hold voided too.
 */
export async function speechAnalysisWorkflow(input: SpeechAnalysisInput): Promise<SpeechAnalysisResult> {
  const { speechCallId, workspaceId, taskQueue } = input;
  const { analyseSpeechCall } = analysisActivities(taskQueue);
  const { failSpeechCall, billSpeechCall } = bookkeepingActivities(taskQueue);
  try {
    const { totalScore } = await analyseSpeechCall({ speechCallId });
    await billSpeechCall({ speechCallId, workspaceId });
    return { status: 'completed', totalScore };
  } catch (error) {
    const failure = failureOf(error);
    await CancellationScope.nonCancellable(async () => {
      await failSpeechCall({ speechCallId, ...failure });
      await billSpeechCall({ speechCallId, workspaceId });
    });
    return { status: 'failed', errorCode: failure.errorCode };
  }
}
