import type { ErrorCode } from '../../lib/error-codes';

// The shapes of lead intake, shared by the CLASSIC (leads.ts) and JOURNEY (journey-intake.ts) paths and the
// rows both write (lead-store.ts): in a module of their own, so that none of the three imports another in a loop.

export interface LeadInput {
  phone: string;
  name?: string;
  fields: Record<string, unknown>;
}

export interface LeadToAdmit {
  lead: LeadInput;
  idempotencyKey: string;
}

export type Admission =
  | { outcome: 'queued' | 'duplicate'; leadId: string; undeclaredVariables: string[] }
  | { outcome: 'rejected'; leadId: null; retryable: true; error: ErrorCode; reason: string }
  | { outcome: 'invalid'; leadId: null; issues: Array<{ path: string[]; message: string; code: string }> };

/** What storing a request's leads gave: the row of each admitted key, and the answer of each key refused. */
export interface StoredLeads {
  rows: LeadRow[];
  refused: Map<string, Admission>;
  /** JOURNEY: the lead field names the graph never reads. */
  undeclaredVariables?: (lead: LeadInput) => string[];
}

/** A lead's row as intake reads it back. Shared by the CLASSIC (leads.ts) and JOURNEY (journey-intake.ts) intake. */
export interface LeadRow {
  id: string;
  idempotencyKey: string;
  workflowId: string;
  workflowStartedAt: Date | null;
  /** This statement inserted the row (PostgreSQL's xmax is 0 for a row no transaction has updated). */
  inserted: boolean;
}
