import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { CallIntelligenceActivities } from '../../activities/call-intelligence/call-intelligence';
import type { CallIntelligenceInput, CallIntelligenceResult } from '../../lib/call-intelligence/call-intelligence';
import { ErrorCode } from '../../lib/error-codes';
import { refusalOf } from '../../lib/temporal/refusal';
import {
  callFieldsExtracted,
  callIntelligenceStored,
  untilCarrierHasTranscript,
} from '../../lib/temporal/retry-policies';

/**
 * The carrier makes a transcript once the call has ended; until it has one the activity fails with
 * call_has_no_transcript and is retried, for about a minute in all (2 + 4 + 8 + 16 + 30 s).
 */
const { ensureCallTranscript } = proxyActivities<CallIntelligenceActivities>({
  startToCloseTimeout: '30 seconds',
  retry: untilCarrierHasTranscript,
});
/** A model-backed extractor may take a while and fail for a time; the rule-based one takes milliseconds. */
const { extractCallFields } = proxyActivities<CallIntelligenceActivities>({
  startToCloseTimeout: '2 minutes',
  retry: callFieldsExtracted,
});
/** The rules' evaluation runs in a CPU budget thread (docs/cpu-budget.md): past its budget the job fails at once. */
const { storeCallIntelligence } = proxyActivities<CallIntelligenceActivities>({
  startToCloseTimeout: '30 seconds',
  retry: callIntelligenceStored,
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
    if (refusalOf(error)?.type === ErrorCode.call_has_no_transcript) return { status: 'no_transcript' };
    throw error;
  }
  // What was extracted (with a model's evaluation, or the reason the rules stood in) goes to the store as it was
  // recorded: the same activities in the same order as before, so older histories replay unchanged.
  const extracted = await extractCallFields({ callId });
  const computedAt = new Date().toISOString();
  const { score } = await storeCallIntelligence({
    ...extracted,
    callId,
    computedAt,
    jobId: workflowInfo().workflowId,
  });
  return { status: 'computed', score };
}
