import { z } from 'zod';
import { e164PhoneSchema } from '../../lib/phone';
import { defineRoute } from '../http/route';
import { insertDoNotCallNumbers } from './lead-store';

const addNumbersSchema = z.object({
  phones: z.array(e164PhoneSchema).min(1).max(10_000),
});

export const doNotCallRoutes = [
  defineRoute({
    method: 'post',
    path: '/do-not-call',
    access: { permission: 'calls.edit' },
    summary:
      "Add numbers to the workspace's Do-Not-Call list, read before every call attempt. Removing a number is refused to API keys.",
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
      return { status: 200, body: { added, total: phones.length } };
    },
  }),
];
