import { calendarConnectionRows } from '../lib/calendar/calendar-connection';
import { carrierConnectionRows } from '../lib/carrier-connections/connections';
import { crmAdminTokenRows } from '../lib/crm/admin-token';
import { crmWebhookSecretRows } from '../lib/crm/webhook-secret';
import { functionSigningSecretRows } from '../lib/functions/signing-secrets';
import { resultWebhookEndpointRows } from '../lib/result-webhooks/endpoint-secrets';
import { ConflictError as StateConflict } from '../lib/operator-refusals';
import type { RekeyReport, SealedRowKind } from '../lib/secrets/sealed-rows';
import { sheetConnectionRows } from '../lib/sheets/connections';
import { whatsappConnectionRows } from '../lib/whatsapp/connections';

/**
 * Every table that holds a customer's secret, by the name `secrets rekey` answers it under: what a new key of
 * SECRETS_KEYS must be moved over (docs/providers.md#rotating-the-key-ring). A provider's new table is added here.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each kind has its own row type; rekeyRows only reads the envelope columns and id
export const SEALED_ROW_KINDS: Record<string, SealedRowKind<any>> = {
  carrierConnections: carrierConnectionRows,
  whatsappConnections: whatsappConnectionRows,
  sheetConnections: sheetConnectionRows,
  crmAdminTokens: crmAdminTokenRows,
  // These two were kept in clear before: a rekey seals those first (sealClearRows), then moves the others.
  crmWebhookSecrets: crmWebhookSecretRows,
  resultWebhookEndpoints: resultWebhookEndpointRows,
  functionSigningSecrets: functionSigningSecretRows,
  calendarConnections: calendarConnectionRows,
};

/**
 * What a rekey answers: the key and the rows moved; refused (exit 1) when some could not be opened, which are named
 * and left as they are while the others are moved all the same.
 */
export function rekeyAnswer(
  what: string,
  { keyId, rekeyed, unreadable }: RekeyReport,
): { keyId: string; rekeyed: string[] } {
  if (unreadable.length > 0)
    throw new StateConflict(
      `rekeyed ${rekeyed.length} ${what}(s) to key "${keyId}"; ${unreadable.length} could not be opened and were left as they are: ${unreadable.map(({ id, reason }) => `${id} (${reason})`).join('; ')}`,
    );
  return { keyId, rekeyed };
}
