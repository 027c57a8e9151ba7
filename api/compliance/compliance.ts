import { knownRedactions } from '../../lib/compliance/compliance-store';
import type { RedactionRule } from '../../lib/compliance/redaction';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { complianceSettingsOf, upsertComplianceSettings } from './compliance-store';

/** The redaction switches of the API, each with its rule (lib/compliance/redaction.ts). */
export const REDACTION_SWITCHES = {
  cardNumbers: 'card_number',
  emailAddresses: 'email_address',
  usSocialSecurityNumbers: 'us_ssn',
  ibans: 'iban',
} as const satisfies Record<string, RedactionRule>;

export type RedactionSwitches = Record<keyof typeof REDACTION_SWITCHES, boolean>;

export interface ComplianceInput {
  disclosure: string | null;
  redaction: RedactionSwitches;
  recording: { enabled: boolean; retentionDays: number | null };
}

function complianceView(
  row: {
    disclosure: string | null;
    redactions: string[];
    recordingEnabled: boolean;
    recordingRetentionDays: number | null;
    updatedAt: Date;
  } | null,
) {
  const on = knownRedactions(row?.redactions);
  return {
    disclosure: row?.disclosure ?? null,
    redaction: Object.fromEntries(
      Object.entries(REDACTION_SWITCHES).map(([name, rule]) => [name, on.includes(rule)]),
    ) as RedactionSwitches,
    recording: { enabled: row?.recordingEnabled ?? false, retentionDays: row?.recordingRetentionDays ?? null },
    updatedAt: row ? row.updatedAt.toISOString() : null,
  };
}

export async function getCompliance({ db }: AppServices, principal: Principal) {
  return complianceView(await complianceSettingsOf(db, principal.workspaceId));
}

/** Replaces the workspace's settings whole; they apply from the next turn stored and the next call answered. */
export async function putCompliance({ db }: AppServices, principal: Principal, input: ComplianceInput) {
  const data = {
    disclosure: input.disclosure,
    redactions: Object.entries(REDACTION_SWITCHES)
      .filter(([name]) => input.redaction[name as keyof RedactionSwitches])
      .map(([, rule]) => rule),
    recordingEnabled: input.recording.enabled,
    recordingRetentionDays: input.recording.retentionDays,
  };
  return complianceView(await upsertComplianceSettings(db, principal.workspaceId, data));
}
