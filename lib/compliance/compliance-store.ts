import type { RunSql } from '../run-sql';
import { REDACTION_RULES, redactTurns, type RedactionRule, type RedactionSettings } from './redaction';

/**
 * A workspace's compliance settings (docs/features/compliance.md) as the calls read them: the disclosure said before
 * the agent's first message, and the redaction rules every stored transcript turn goes through. A workspace without a
 * row has neither.
 */
export interface ComplianceSettings extends RedactionSettings {
  /** Said before the agent's opening line; null: none. */
  disclosure: string | null;
}

/** Only the rules this code knows, in their order (a stored value is never trusted to be one). */
export const knownRedactions = (stored: readonly string[] | null | undefined): RedactionRule[] =>
  REDACTION_RULES.filter((rule) => stored?.includes(rule));

/** The redaction settings of the workspace a call belongs to (none: no redaction). One primary-key lookup. */
export async function redactionOfCall(sql: RunSql, callId: string): Promise<RedactionSettings> {
  const [row] = await sql<{ redactions: string[] | null }>(
    {
      name: 'compliance_redaction_of_call',
      text: `SELECT cs.redactions FROM "Call" c JOIN "ComplianceSettings" cs ON cs."workspaceId" = c."workspaceId"
              WHERE c.id = $1::uuid`,
    },
    callId,
  );
  return { redactions: knownRedactions(row?.redactions) };
}

/** A call's turns as they may be stored: redacted by its workspace's rules (lib/compliance/redaction.ts redactTurns). */
export async function redactedTurnsOfCall<Turn extends { text: string }>(
  sql: RunSql,
  callId: string,
  turns: readonly Turn[],
): Promise<Turn[]> {
  if (turns.length === 0) return [];
  return redactTurns(turns, await redactionOfCall(sql, callId));
}

/** The redaction settings of a workspace (none: no redaction). One primary-key lookup. */
export async function redactionOfWorkspace(sql: RunSql, workspaceId: string): Promise<RedactionSettings> {
  const [row] = await sql<{ redactions: string[] | null }>(
    {
      name: 'compliance_redaction_of_workspace',
      text: `SELECT redactions FROM "ComplianceSettings" WHERE "workspaceId" = $1::uuid`,
    },
    workspaceId,
  );
  return { redactions: knownRedactions(row?.redactions) };
}

/**
 * Turns of a conversation that is not a call (a test session, docs/features/test-sessions.md) as they may be stored:
 * redacted by its workspace's rules, as a call's are (redactedTurnsOfCall).
 */
export async function redactedTurnsOfWorkspace<Turn extends { text: string }>(
  sql: RunSql,
  workspaceId: string,
  turns: readonly Turn[],
): Promise<Turn[]> {
  if (turns.length === 0) return [];
  return redactTurns(turns, await redactionOfWorkspace(sql, workspaceId));
}
