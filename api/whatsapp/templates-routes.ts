import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { ErrorCode } from '../../lib/error-codes';
import {
  checkTemplateBody,
  TEMPLATE_LANGUAGE,
  TEMPLATE_LIMITS,
  TEMPLATE_NAME,
} from '../../lib/whatsapp/template-rules';
import { defineRoute } from '../http/route';
import {
  createWhatsAppTemplate,
  deleteWhatsAppTemplate,
  findOwnedWhatsAppTemplate,
  listWhatsAppTemplates,
  syncWhatsAppTemplateStatus,
  whatsAppTemplateView,
} from './whatsapp-templates';

const CATEGORIES = ['marketing', 'utility', 'authentication'] as const;
const STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'PAUSED', 'DISABLED'] as const;

const templateBody = z
  .string()
  .min(1)
  // UTF-16 code units, not code points (atMostCodePoints): the body goes to Meta as it is, whose documented
  // "1024 characters" the WhatsApp twin (simulators/meta-twin/server.ts) counts in UTF-16 units; counting code points
  // would take a body of 1024 emoji that Meta may refuse.
  .max(TEMPLATE_LIMITS.bodyLength)
  .superRefine((body, context) => {
    for (const message of checkTemplateBody(body).problems) context.addIssue({ code: 'custom', message, input: body });
  })
  .describe(
    `1 to ${TEMPLATE_LIMITS.bodyLength} UTF-16 code units, as Meta counts them (an emoji or other character beyond U+FFFF counts 2). Variables are numbered {{1}}, {{2}}, ... {{n}}: no spaces inside the braces, ` +
      'no leading zeros, every number from 1 to n used (each as often as wanted, in any order); any other {{...}}, or a stray {{ or }}, is refused.',
  );

const newTemplateSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .check(atMostCodePoints(TEMPLATE_LIMITS.nameLength))
      .regex(TEMPLATE_NAME, 'lowercase letters, digits and underscores only')
      .describe(
        `The platform's rule: lowercase letters, digits and underscores, 1 to ${TEMPLATE_LIMITS.nameLength} characters. Unique with language in the workspace.`,
      ),
    language: z
      .string()
      .regex(TEMPLATE_LANGUAGE, 'a language code of the platform such as en or en_US')
      .describe("The platform's language code: en, en_US, pt_BR, ..."),
    category: z.enum(CATEGORIES).describe('Which prices its messages (docs/features/credits.md).'),
    body: templateBody,
    examples: z
      .array(z.string().min(1).check(atMostCodePoints(1024)))
      .max(100)
      .optional()
      .describe(
        "One sample value per variable, in order ({{1}} first), sent to the provider as the body's `example` (Meta requires them for a body with variables and refuses the template without them). Exactly variableCount values when given.",
      ),
  })
  .superRefine((template, context) => {
    if (template.examples === undefined) return;
    const { variableCount } = checkTemplateBody(template.body);
    if (template.examples.length !== variableCount)
      context.addIssue({
        code: 'custom',
        path: ['examples'],
        message: `${variableCount} example value(s) expected, one per variable {{1}}..{{${variableCount}}}`,
      });
  });

const templateSchema = z.object({
  id: z.string().uuid(),
  name: z.string(),
  language: z.string(),
  category: z.enum(CATEGORIES),
  body: z.string(),
  variableCount: z.number().int().describe('n of its variables {{1}}..{{n}}: a message with it gives n values.'),
  status: z
    .enum(STATUSES)
    .describe(
      "The provider's review: PENDING until it decides, then APPROVED, REJECTED (rejectedReason), PAUSED or DISABLED. Only APPROVED is sent.",
    ),
  rejectedReason: z.string().nullable().describe("REJECTED: the provider's reason (e.g. INVALID_FORMAT); else null."),
  qualityRating: z.enum(['GREEN', 'YELLOW', 'RED', 'UNKNOWN']).describe("The provider's quality rating."),
  providerTemplateId: z
    .string()
    .nullable()
    .describe("The provider's id of the template; null only while its submission has not finished."),
  statusUpdatedAt: z.iso.datetime().describe('When status, rejectedReason or qualityRating last changed here.'),
  createdAt: z.iso.datetime(),
});

const templateParams = z.object({ id: z.string().describe('A template id of GET /whatsapp/templates.') });
const providerFailure = { 502: [ErrorCode.provider_error] };
const tags = ['WhatsApp'];

export const whatsAppTemplateRoutes = [
  defineRoute({
    method: 'get',
    path: '/whatsapp/templates',
    access: { permission: 'whatsapp.view' },
    summary: "The workspace's message templates, all at once (unpaginated), newest first; status keeps one status's.",
    tags,
    query: z.object({ status: z.enum(STATUSES).optional() }),
    responses: { 200: { description: 'Every template of the workspace.', schema: z.array(templateSchema) } },
    handler: async ({ services, principal, query }) => ({
      status: 200,
      body: (await listWhatsAppTemplates(services, principal, query)).map(whatsAppTemplateView),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/whatsapp/templates',
    access: { permission: 'whatsapp.edit' },
    summary:
      "Create a template and submit it to the provider for review, under the workspace's WhatsApp Business Account (that of its earliest connected sender): stored PENDING; the review arrives by the provider's webhook or POST /whatsapp/templates/{id}/sync-status. Nothing is stored when the provider refuses or fails (502). While simulators are disabled (SIMULATORS, the production default), that sender must be bound to a Meta connection: 409 no_whatsapp_connection naming it otherwise.",
    tags,
    body: newTemplateSchema,
    responses: { 201: { description: 'Created, PENDING.', schema: templateSchema } },
    errors: {
      409: [ErrorCode.whatsapp_sender_required, ErrorCode.whatsapp_template_exists, ErrorCode.no_whatsapp_connection],
      ...providerFailure,
    },
    handler: async ({ services, principal, body }) => ({
      status: 201,
      body: whatsAppTemplateView(await createWhatsAppTemplate(services, principal, body)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/whatsapp/templates/{id}',
    access: { permission: 'whatsapp.view' },
    summary: 'Read one template as stored (POST .../sync-status asks the provider).',
    tags,
    params: templateParams,
    responses: { 200: { description: 'The template.', schema: templateSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: whatsAppTemplateView(await findOwnedWhatsAppTemplate(services, principal, params.id)),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/whatsapp/templates/{id}',
    access: { permission: 'whatsapp.delete' },
    summary: 'Delete a template here for good; messages already sent with it keep its id and their text.',
    tags,
    params: templateParams,
    responses: { 204: { description: 'Deleted.' } },
    handler: async ({ services, principal, params }) => {
      await deleteWhatsAppTemplate(services, principal, params.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/whatsapp/templates/{id}/sync-status',
    // Spec 5, stricter scopes: the dashboard needs whatsapp.view, a key whatsapp.edit.
    access: { permission: 'whatsapp.edit' },
    summary:
      "Read the provider's current review of the template and store it (status, rejectedReason, qualityRating; statusUpdatedAt when one changed). A key needs whatsapp.edit.",
    tags,
    params: templateParams,
    responses: { 200: { description: 'The template, as now stored.', schema: templateSchema } },
    errors: providerFailure,
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: whatsAppTemplateView(await syncWhatsAppTemplateStatus(services, principal, params.id)),
    }),
  }),
];
