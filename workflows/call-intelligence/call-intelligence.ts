import { ActivityFailure, ApplicationFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { CallIntelligenceActivities } from '../../activities/call-intelligence/call-intelligence';
import type { CallIntelligenceInput, CallIntelligenceResult } from '../../lib/call-intelligence/call-intelligence';
import { ErrorCode } from '../../lib/error-codes';

/**
 * The carrier makes a transcript once the call has ended; until it has one the activity fails with
 * call_has_no_transcript and is retried, for about a minute in all (2 + 4 + 8 + 16 + 30 s).
 */
const { ensureCallTranscript } = proxyActivities<CallIntelligenceActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 6 },
});
/** A model-backed extractor may take a while and fail for a time; the rule-based one takes milliseconds. */
const { extractCallFields } = proxyActivities<CallIntelligenceActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});
const { storeCallIntelligence } = proxyActivities<CallIntelligenceActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * The call intelligence of one call (docs/features/call-intelligence.md): its transcript, fetched from the
 * carrier when none is stored, the agent's extraction fields filled from it, and its evaluation,
 * stored on the call. Started when an answered call ends and by POST /calls/{id}/intelligence (a
 * re-run replaces what is stored). A call with no transcript to be had ends as no_transcript and
 * changes nothing.
 */
export async function callIntelligenceWorkflow({ callId }: CallIntelligenceInput): Promise<CallIntelligenceResult> {
  try {
    await ensureCallTranscript({ callId });
  } catch (error) {
    if (isFailureOfType(error, ErrorCode.call_has_no_transcript)) return { status: 'no_transcript' };
    throw error;
  }
  const { extraction, provider } = await extractCallFields({ callId });
  const computedAt = new Date().toISOString();
  const { score } = await storeCallIntelligence({
    callId,
    extraction,
    provider,
    computedAt,
    jobId: workflowInfo().workflowId,
  });
  return { status: 'computed', score };
}

function isFailureOfType(error: unknown, type: string): boolean {
  return error instanceof ActivityFailure && error.cause instanceof ApplicationFailure && error.cause.type === type;
}
