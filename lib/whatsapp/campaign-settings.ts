import { z } from 'zod';
import { atMostCodePoints } from '../code-point-length';
import type { Database } from '../database';
import { ErrorCode } from '../error-codes';
import { Refusal } from '../refusal';
import { callingWindowSchema } from '../dial-ladder/calling-window';

/**
 * What fills one template variable of a campaign's message: a field of the lead (`name` and `phone`
 * are the lead's own; any other name is one of its pushed fields), or a fixed value. A field the lead
 * lacks gives `fallback`, else the message is not sent (the lead fails: whatsapp_variable_missing).
 */
export const templateVariableSourceSchema = z.union([
  z.strictObject({
    field: z
      .string()
      .min(1)
      .check(atMostCodePoints(100))
      .describe("The lead's field: name, phone, or one of its fields."),
    fallback: z
      .string()
      .min(1)
      .check(atMostCodePoints(1024))
      .optional()
      .describe('Used when the lead lacks the field.'),
  }),
  z.strictObject({ value: z.string().min(1).check(atMostCodePoints(1024)).describe('The same text for every lead.') }),
]);

/** A WHATSAPP campaign's messaging as stored (WhatsAppCampaignSettings): PUT /whatsapp/campaigns/{id}. */
export const whatsAppCampaignSettingsSchema = z.strictObject({
  senderId: z.string().uuid(),
  templateId: z.string().uuid(),
  /** Variable number ("1", "2", ...) to its source: exactly the template's {{1}}..{{n}}. */
  variables: z.record(z.string().regex(/^[1-9]\d*$/), templateVariableSourceSchema),
  sendingWindow: callingWindowSchema,
});

export type TemplateVariableSource = z.infer<typeof templateVariableSourceSchema>;
export type WhatsAppCampaignSettingsInput = z.infer<typeof whatsAppCampaignSettingsSchema>;

/** The lead's values of the template's variables, {{1}} first; the missing variables' numbers when some cannot be filled. */
export function fillTemplateVariables(
  variables: Record<string, TemplateVariableSource>,
  variableCount: number,
  lead: { name: string | null; phone: string; fields: Record<string, unknown> },
): { values: string[] } | { missing: number[] } {
  const values: string[] = [];
  const missing: number[] = [];
  for (let number = 1; number <= variableCount; number++) {
    const source = variables[String(number)];
    const value = !source
      ? undefined
      : 'value' in source
        ? source.value
        : (textOf(
            source.field === 'name' ? lead.name : source.field === 'phone' ? lead.phone : lead.fields[source.field],
          ) ?? source.fallback);
    if (value === undefined) missing.push(number);
    else values.push(value);
  }
  return missing.length ? { missing } : { values };
}

/** A field's value as message text: strings as they are, numbers and booleans written out; nothing else. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** Refuses to start or resume a WHATSAPP campaign whose messaging was never set (409 whatsapp_campaign_not_configured). */
export async function assertWhatsAppCampaignConfigured(db: Database, campaignId: string) {
  const stored = await db.whatsAppCampaignSettings.findUnique({
    where: { campaignId },
    select: { campaignId: true },
  });
  if (!stored)
    throw new Refusal(ErrorCode.whatsapp_campaign_not_configured, {
      detail: 'set its sender, template and variables with PUT /whatsapp/campaigns/{id} first',
    });
}
