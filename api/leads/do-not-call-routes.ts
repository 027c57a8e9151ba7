import { z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import { DO_NOT_CALL_SOURCES, doNotCallEntryOf } from '../../lib/leads/do-not-call';
import { e164PhoneSchema } from '../../lib/phone';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import { defineRoute } from '../http/route';
import { insertDoNotCallNumbers } from './lead-store';
import { tellLaddersOfOptOut } from '../../lib/temporal/do-not-call';

const addNumbersSchema = z.object({
  phones: z.array(e164PhoneSchema).min(1).max(10_000),
});

const doNotCallEntrySchema = z.object({
  phone: z.string().describe('The listed number (E.164).'),
  source: z
    .enum(DO_NOT_CALL_SOURCES)
    .describe(
      "How it was listed: api (POST /do-not-call), spoken_opt_out (the person asked on a call), whatsapp_reply (an opt-out keyword or the opt-out button in a WhatsApp reply), call_intelligence (an opt-out read in the call's transcript after the call); unknown: listed before the source was recorded.",
    ),
  callId: z.string().nullable().describe('The call the person opted out on (spoken_opt_out, call_intelligence).'),
  messageId: z
    .string()
    .nullable()
    .describe(
      'The inbound WhatsApp message that opted out (whatsapp_reply; GET /whatsapp/conversations/{id}/messages).',
    ),
  listedAt: z
    .string()
    .describe('When it was listed (ISO 8601, UTC). A number is listed once: the first listing stays.'),
});

export const doNotCallRoutes = [
  defineRoute({
    method: 'post',
    path: '/do-not-call',
    access: { permission: 'calls.edit' },
    summary:
      "Add numbers to the workspace's Do-Not-Call list, read before every call attempt and every WhatsApp message. A lead of a listed number waiting for a later attempt ends at once, cancelled, its result's outcome opted_out (docs/features/dial-ladder.md#an-opt-out-ends-the-wait). Removing a number is refused to API keys.",
    tags: ['Calls'],
    body: addNumbersSchema,
    responses: {
      200: {
        description: 'added: numbers new to the list; total: valid unique numbers in the request.',
        schema: z.object({ added: z.number().int(), total: z.number().int() }),
      },
    },
    handler: async ({ services, principal, body }) => {
      const phones = [...new Set(body.phones)];
      const added = await insertDoNotCallNumbers(services.db, principal.workspaceId, phones);
      // Their leads waiting for a later attempt end now (docs/features/dial-ladder.md#an-opt-out-ends-the-wait).
      if (added)
        await tellLaddersOfOptOut(services.temporal, poolSql(services.sql), {
          workspaceId: principal.workspaceId,
          phones,
        });
      return { status: 200, body: { added, total: phones.length } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/do-not-call/{phone}',
    access: { permission: 'calls.view' },
    summary:
      "Whether a number is on the workspace's Do-Not-Call list, and how it came to be (docs/features/leads.md#the-do-not-call-list): its source, the call or message, and when. 404 not_found: not listed.",
    tags: ['Calls'],
    params: z.object({ phone: e164PhoneSchema.describe('The number, E.164 (+ written %2B or as it is).') }),
    responses: { 200: { description: 'The number is listed.', schema: doNotCallEntrySchema } },
    errors: { 404: [ErrorCode.not_found] },
    handler: async ({ services, principal, params }) => {
      const entry = await doNotCallEntryOf(poolSql(services.sql), principal.workspaceId, params.phone);
      if (!entry) throw new Refusal(ErrorCode.not_found, { detail: `${params.phone} is not on the Do-Not-Call list` });
      return { status: 200, body: entry };
    },
  }),
];
