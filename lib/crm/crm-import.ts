/** The input and result of crmImportWorkflow (workflows/crm/crm-import.ts); shared by the API and the worker. */
export interface CrmImportWorkflowInput {
  importId: string;
}

export interface CrmImportWorkflowResult {
  /** completed, failed (error on the import), or gone (the import row was removed). */
  status: string;
}

/** What one page step did (activities/crm/crm-import.ts). */
export interface CrmImportStep {
  /** The import is no longer running: completed, failed or gone. */
  done: boolean;
  status: string;
  /** How long to wait before the next page: the cost bucket refilling, or a THROTTLED answer. */
  waitMs: number;
}
