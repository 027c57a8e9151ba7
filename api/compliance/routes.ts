import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { defineRoute } from '../http/route';
import { REDACTION_SWITCHES, getCompliance, putCompliance } from './compliance';

/** The disclosure's length at most: a sentence or two, said before every call's first message. */
export const MAX_DISCLOSURE_CHARACTERS = 500;

const tags = ['Compliance'];

/** The longest a recording may be kept before its deletion (docs/features/recordings.md#retention): ten years. */
export const MAX_RECORDING_RETENTION_DAYS = 3650;

const retentionDays = z
  .number()
  .int()
  .min(1)
  .max(MAX_RECORDING_RETENTION_DAYS)
  .nullable()
  .describe(
    `Days a recording is kept after the call, 1 to ${MAX_RECORDING_RETENTION_DAYS}; then it is deleted, at the carrier too, and GET /calls/{id}/recording answers 410 recording_deleted. null: kept for as long as the carrier keeps it.`,
  );

const recordingSettings = z
  .strictObject({
    enabled: z
      .boolean()
      .describe(
        'Record every answered call at its carrier (Twilio, Telnyx), from the answer to the end; the disclosure then ends with the recording notice ("This call is being recorded.").',
      ),
    retentionDays,
  })
  .describe('Call recordings (docs/features/recordings.md).');

const disclosure = z
  .string()
  .trim()
  .min(1)
  .check(atMostCodePoints(MAX_DISCLOSURE_CHARACTERS))
  .refine((text) => !/\p{Cc}/u.test(text.replace(/[\n\t]/g, ' ')), 'must not hold control characters')
  .nullable()
  .describe(
    `Said before the agent's opening line on every call (e.g. "This call is recorded and handled by an AI assistant."): 1 to ${MAX_DISCLOSURE_CHARACTERS} characters, trimmed, said as written; null: none.`,
  );

const switchDescriptions: Record<keyof typeof REDACTION_SWITCHES, string> = {
  cardNumbers: 'Card numbers: 13 to 19 digits, spaces or dashes between them, passing the Luhn check: [card number].',
  emailAddresses: 'E-mail addresses, written or spoken ("ana at example dot com"): [email address].',
  usSocialSecurityNumbers: 'US Social Security numbers (3-2-4 digits, outside the ranges never issued): [SSN].',
  ibans: 'IBANs passing their mod-97 check: [IBAN].',
};

const redactionShape = Object.fromEntries(
  Object.entries(switchDescriptions).map(([name, description]) => [name, z.boolean().describe(description)]),
) as Record<keyof typeof REDACTION_SWITCHES, z.ZodBoolean>;

const redaction = z
  .strictObject(redactionShape)
  .describe(
    'Each redaction rule on or off: a rule on masks what it finds in every transcript turn before it is stored.',
  );

const complianceSchema = z.object({
  disclosure: z
    .string()
    .nullable()
    .describe(
      "Said before the agent's opening line; null: none. As set: while recording is on, the calls say it followed by the recording notice.",
    ),
  redaction: z.object(redactionShape).describe('Each redaction rule, on or off.'),
  recording: z
    .object({ enabled: z.boolean(), retentionDays: z.number().int().nullable() })
    .describe(
      'Call recordings (docs/features/recordings.md): on or off (never set: off), and their retention in days.',
    ),
  updatedAt: z.string().nullable().describe('ISO 8601 instant of the last change; null: never set (the defaults).'),
});

export const complianceRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/compliance',
    access: { permission: 'calls.view' },
    summary:
      "The workspace's compliance settings (docs/features/compliance.md): the disclosure said before the agent's first message, the redaction rules applied to transcripts, and call recording (docs/features/recordings.md). Never set: no disclosure, every rule off, recording off.",
    tags,
    responses: { 200: { description: 'The settings.', schema: complianceSchema } },
    handler: async ({ services, principal }) => ({ status: 200, body: await getCompliance(services, principal) }),
  }),
  defineRoute({
    method: 'put',
    path: '/v1/compliance',
    // What is said and stored on the workspace's calls: the calls area (calls.edit), which a key can hold;
    // workspace.edit is a scope a key can never hold (spec section 5).
    access: { permission: 'calls.edit' },
    summary:
      'Replace the compliance settings whole (calls.edit). They apply from the next call answered and the next transcript turn stored; what is stored is not rewritten. A body without `recording` turns recording off (the default); a shorter retention applies to the recordings already made.',
    tags,
    body: z.strictObject({
      disclosure,
      redaction,
      recording: recordingSettings
        .default({ enabled: false, retentionDays: null })
        .describe('Call recordings (docs/features/recordings.md); absent: off, no retention.'),
    }),
    responses: { 200: { description: 'The settings as stored.', schema: complianceSchema } },
    handler: async ({ services, principal, body }) => ({
      status: 200,
      body: await putCompliance(services, principal, body),
    }),
  }),
];
