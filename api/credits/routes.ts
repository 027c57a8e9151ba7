import { z } from 'zod';
import { CREDIT_KINDS } from '../../lib/credits/ledger-store';
import { cursorQuery } from '../http/pagination';
import { defineRoute } from '../http/route';
import { storableInstantSchema } from '../http/storable-input';
import { creditBalance, listLedger } from './credits';

const credits = (what: string) =>
  z.string().describe(`${what}, a decimal string with 4 places ("12.5000"), never a binary float.`);

const ledgerEntrySchema = z.object({
  id: z.string().uuid(),
  kind: z
    .enum(CREDIT_KINDS)
    .describe(
      'grant (an operator added credits), refund, test_call, recording_analysis, whatsapp_message (a charge), hold (a reservation, see status), hold_release (a hold giving back what it held).',
    ),
  amount: credits('Signed: negative took credits from the balance'),
  balanceAfter: credits('The balance right after this entry'),
  status: z
    .enum(['pending', 'posted', 'voided'])
    .describe('posted: final. A hold is pending while it reserves, then posted (charged) or voided (released).'),
  heldFor: z.string().nullable().describe('A hold: the kind it will be charged as.'),
  holdId: z.string().uuid().nullable().describe('A charge or hold_release that settles a hold: that hold.'),
  referenceType: z.string().nullable().describe('What the entry is for: call (a test call), ...; null for a grant.'),
  referenceId: z.string().nullable().describe('The id of what the entry is for.'),
  actor: z.enum(['api_key', 'operator', 'system']).describe('Who caused it.'),
  actorId: z.string().nullable().describe('api_key: the key id; system: the part of the service.'),
  idempotencyKey: z.string().describe('Unique in the workspace: a retried operation with it never charges twice.'),
  createdAt: z.string().describe('ISO 8601 instant.'),
  settledAt: z.string().nullable().describe('A hold: when it was posted or voided.'),
});

const ledgerQuery = z
  .object({
    ...cursorQuery(50, 200),
    kind: z.enum(CREDIT_KINDS).optional().describe('Only entries of this kind.'),
    from: storableInstantSchema
      .optional()
      .describe(
        'Only entries made at or after this instant (RFC 3339, with seconds and offset: 2026-11-01T00:00:00Z).',
      ),
    to: storableInstantSchema.optional().describe('Only entries made before this instant (exclusive).'),
  })
  .refine((query) => !query.from || !query.to || Date.parse(query.from) < Date.parse(query.to), {
    path: ['to'],
    message: 'to must be after from',
  });

export const creditRoutes = [
  defineRoute({
    method: 'get',
    path: '/credits/balance',
    access: { permission: 'billing.view' },
    summary:
      "The workspace's credits: balance, what it can spend now (pending holds are already taken out of it), and pendingHolds, what holds of operations still running reserve.",
    tags: ['Credits'],
    responses: {
      200: {
        description: 'The balance.',
        schema: z.object({
          balance: credits('Spendable now'),
          pendingHolds: credits('Reserved by pending holds (already taken out of balance)'),
        }),
      },
    },
    handler: async ({ services, principal }) => ({ status: 200, body: await creditBalance(services, principal) }),
  }),
  defineRoute({
    method: 'get',
    path: '/credits/ledger',
    access: { permission: 'billing.view' },
    summary:
      "The workspace's credit ledger, newest first (createdAt, then id), by cursor: limit default 50, max 200; nextCursor null on the last page; " +
      'totalCount counts every entry matching the filters (kind, from inclusive, to exclusive), whatever the page. The ledger is append-only: corrections are new entries.',
    tags: ['Credits'],
    query: ledgerQuery,
    responses: {
      200: {
        description: 'One page of entries.',
        schema: z.object({
          items: z.array(ledgerEntrySchema),
          nextCursor: z.string().nullable(),
          totalCount: z.number().int(),
        }),
      },
    },
    handler: async ({ services, principal, query }) => ({
      status: 200,
      body: await listLedger(services, principal, query),
    }),
  }),
];
