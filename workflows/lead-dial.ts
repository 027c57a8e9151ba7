import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ErrorCode } from '../lib/error-codes';

const { placeCall, finishLead } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 20,
    nonRetryableErrorTypes: [ErrorCode.lead_not_found, ErrorCode.telephony_invalid_number],
  },
});

export interface LeadDialInput {
  leadId: string;
}

export interface LeadDialResult {
  status: 'completed' | 'failed';
  outcome: string;
}

/** One lead, one dial. The dial ladder (rungs, delays, calling window) grows from here. */
export async function leadDialWorkflow({ leadId }: LeadDialInput): Promise<LeadDialResult> {
  const call = await placeCall({ leadId, attempt: 1 });
  const status = call.outcome === 'answered' ? 'completed' : 'failed';
  await finishLead({ leadId, status });
  return { status, outcome: call.outcome };
}
