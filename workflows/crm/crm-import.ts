import { ActivityFailure, ApplicationFailure, continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { CrmImportActivities } from '../../activities/crm/crm-import';
import type { CrmImportWorkflowInput, CrmImportWorkflowResult } from '../../lib/crm/crm-import';
import { storeAdminPage, untilDatabaseAnswers } from '../../lib/temporal/retry-policies';

/** A page is one Admin API request and one transaction; it heartbeats, so a worker lost mid-page is noticed in 10 s. */
const { importCrmPage } = proxyActivities<CrmImportActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: storeAdminPage,
});
const { failCrmImport } = proxyActivities<CrmImportActivities>({
  startToCloseTimeout: '30 seconds',
  retry: untilDatabaseAnswers,
});

/** Pages per run before continuing as new, so a large store's history stays short. */
const PAGES_PER_RUN = 200;

function reasonOf(error: unknown): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  return 'a page could not be imported';
}

/**
 * An Admin API import of a store's customers into a DRAFT campaign (docs/features/crm.md#importing-through-the-admin-api):
 * page after page, each read and applied by one activity that checkpoints the cursor, waiting between pages as long as
 * the store's cost bucket needs to refill (and after a THROTTLED answer) with a durable timer. A worker lost mid-page
 * resumes at the cursor; a page applied twice imports nobody twice.
 */
export async function crmImportWorkflow({ importId }: CrmImportWorkflowInput): Promise<CrmImportWorkflowResult> {
  for (let steps = 0; steps < PAGES_PER_RUN; steps++) {
    let step;
    try {
      step = await importCrmPage({ importId });
    } catch (error) {
      await failCrmImport({ importId, error: reasonOf(error) });
      return { status: 'failed' };
    }
    if (step.done) return { status: step.status };
    if (step.waitMs > 0) await sleep(step.waitMs);
  }
  return continueAsNew<(input: CrmImportWorkflowInput) => Promise<CrmImportWorkflowResult>>({ importId });
}
