import { z } from 'zod';

/**
 * The caps on a lead's fields (docs/features/leads.md#the-caps-on-fields), wherever a lead is made: a pushed lead
 * (POST /v1/campaigns/{id}/leads and its batch), a contact's metadata (POST /campaigns/{id}/contacts, the CRM import),
 * a test call's and a test session's lead, a journey run started by hand. A lead's fields go to the model with every
 * request of its conversation and are copied into every call, export and sheet row: unbounded, one lead could make
 * every request of its call cost a megabyte.
 */
export const LEAD_FIELD_LIMITS = {
  /** Keys of one lead's fields: a CRM record's custom properties fit; a thousand of them is not a lead. */
  keys: 50,
  /** Characters of one key: the longest CRM property names seen are about 40; a key is a name, not a text. */
  keyLength: 64,
  /**
   * UTF-8 bytes of the fields as JSON: about 1,000 model tokens at most, added to every request of the call; a batch of
   * 100 leads at the cap still fits the 1 MB body.
   */
  bytes: 4_096,
} as const;

/** The bytes of the fields as stored (their JSON in UTF-8). Linear in the input. */
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');

/** A lead's fields (any JSON object) within LEAD_FIELD_LIMITS; an empty object when absent. */
export const leadFieldsSchema = z
  .record(z.string(), z.unknown())
  .superRefine((fields, ctx) => {
    const keys = Object.keys(fields);
    if (keys.length > LEAD_FIELD_LIMITS.keys) {
      ctx.addIssue({
        code: 'custom',
        message: `must have at most ${LEAD_FIELD_LIMITS.keys} keys (it has ${keys.length})`,
      });
      return;
    }
    const long = keys.find((key) => key.length > LEAD_FIELD_LIMITS.keyLength);
    if (long !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `keys must be at most ${LEAD_FIELD_LIMITS.keyLength} characters (one has ${long.length})`,
      });
      return;
    }
    const bytes = jsonBytes(fields);
    if (bytes > LEAD_FIELD_LIMITS.bytes)
      ctx.addIssue({
        code: 'custom',
        message: `must be at most ${LEAD_FIELD_LIMITS.bytes} bytes as JSON (it is ${bytes})`,
      });
  })
  .describe(
    `At most ${LEAD_FIELD_LIMITS.keys} keys of at most ${LEAD_FIELD_LIMITS.keyLength} characters, and at most ` +
      `${LEAD_FIELD_LIMITS.bytes} bytes as JSON (UTF-8).`,
  );
