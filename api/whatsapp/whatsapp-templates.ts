import type { WhatsAppTemplate, WhatsAppTemplateStatus } from '../../generated/prisma/client';
import { ErrorCode } from '../../lib/error-codes';
import { isUniqueViolation } from '../../lib/prisma-errors';
import { checkTemplateBody } from '../../lib/whatsapp/template-rules';
import {
  WhatsAppProviderError,
  type WhatsAppProvider,
  type WhatsAppTemplateCategory,
} from '../../lib/whatsapp/provider';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { assertSenderConnected } from '../../lib/whatsapp/simulator-stand-in';
import { log } from '../../lib/log';
import {
  deleteUnsubmittedTemplate,
  deleteWhatsAppTemplateWhere,
  earliestConnectedSender,
  insertWhatsAppTemplate,
  markTemplateSubmitted,
  storeTemplateReview,
  whatsAppTemplatesOfWorkspace,
  whatsAppTemplateWhere,
} from './whatsapp-store';

export interface NewWhatsAppTemplate {
  name: string;
  language: string;
  category: WhatsAppTemplateCategory;
  /** Checked by the route (lib/whatsapp/template-rules.ts): numbered variables {{1}}..{{n}}. */
  body: string;
  /** One sample value per variable (Meta's `example`), checked by the route; forwarded, not stored. */
  examples?: string[];
}

/** The provider senders and templates go through; AppServices.whatsapp.provider, set where the app is built. */
export function whatsAppProviderOf(services: AppServices): WhatsAppProvider {
  const provider = services.whatsapp?.provider;
  if (!provider) throw new Error('no WhatsApp provider is configured (AppServices.whatsapp.provider)');
  return provider;
}

/** The provider a Business Account's templates are recorded under: its Meta connection's (meta, meta-twin), if any. */
async function providerOfAccount(provider: WhatsAppProvider, businessAccountId: string): Promise<string | undefined> {
  const routing = provider as WhatsAppProvider & { providerOfAccount?: (id: string) => Promise<string> };
  return routing.providerOfAccount?.(businessAccountId);
}

/**
 * A request to the provider, its failures as the API answers them (as voice previews and translations
 * do): 502 provider_error with upstreamStatus, the provider's HTTP status when it answered with a
 * refusal, 503 when it could not be reached at all.
 */
export async function askWhatsAppProvider<Result>(work: () => Promise<Result>): Promise<Result> {
  try {
    return await work();
  } catch (error) {
    const refused = error instanceof WhatsAppProviderError;
    log.error({ err: error }, 'the WhatsApp provider failed');
    throw new Refusal(ErrorCode.provider_error, { upstreamStatus: refused ? error.httpStatus : 503 });
  }
}

/**
 * The WhatsApp Business Account of the workspace: its earliest connected sender's (templates belong to it). While
 * simulators are disabled, that sender must be bound to a Meta connection (409 no_whatsapp_connection naming it):
 * nothing else would review the template but the simulated provider.
 */
async function businessAccountOf({ db, simulators }: AppServices, workspaceId: string) {
  const sender = await earliestConnectedSender(db, workspaceId);
  if (!sender)
    throw new Refusal(ErrorCode.whatsapp_sender_required, {
      detail: 'connect a WhatsApp sender first: templates belong to its WhatsApp Business Account',
    });
  await assertSenderConnected(db, simulators, sender);
  return sender.businessAccountId;
}

/**
 * Creates a template and submits it for review. The row is written first (PENDING, not yet submitted),
 * so the unique (workspace, name, language) decides a race before the provider hears of it; a provider
 * failure deletes it again and answers 502. Stored PENDING with the provider's id.
 */
export async function createWhatsAppTemplate(services: AppServices, principal: Principal, input: NewWhatsAppTemplate) {
  const { workspaceId } = principal;
  const provider = whatsAppProviderOf(services);
  const businessAccountId = await businessAccountOf(services, workspaceId);
  const { variableCount } = checkTemplateBody(input.body);
  let template: WhatsAppTemplate;
  try {
    const { examples: _examples, ...stored } = input;
    const providerName = (await providerOfAccount(provider, businessAccountId)) ?? provider.name;
    template = await insertWhatsAppTemplate(services.db, {
      ...stored,
      workspaceId,
      variableCount,
      provider: providerName,
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw new Refusal(ErrorCode.whatsapp_template_exists, {
        detail: `another template of this workspace is named ${input.name} in ${input.language}`,
      });
    throw error;
  }
  try {
    const submitted = await askWhatsAppProvider(() => provider.submitTemplate({ businessAccountId, ...input }));
    return await markTemplateSubmitted(services.db, template.id, submitted);
  } catch (error) {
    await deleteUnsubmittedTemplate(services.db, template.id);
    throw error;
  }
}

export async function listWhatsAppTemplates(
  { db }: AppServices,
  principal: Principal,
  query: { status?: WhatsAppTemplateStatus },
): Promise<WhatsAppTemplate[]> {
  return whatsAppTemplatesOfWorkspace(db, principal.workspaceId, query);
}

export async function findOwnedWhatsAppTemplate({ db }: AppServices, principal: Principal, id: string) {
  return findOwned(principal, id, (where) => whatsAppTemplateWhere(db, where));
}

/** Deleted here for good; messages sent with it keep its id (templateId) and their text. */
export async function deleteWhatsAppTemplate({ db }: AppServices, principal: Principal, id: string): Promise<void> {
  await findOwned(principal, id, async (where) => ((await deleteWhatsAppTemplateWhere(db, where)) ? true : null));
}

/**
 * Reads the provider's current review of the template and stores it (status, rejectedReason,
 * qualityRating); statusUpdatedAt moves only when one of them changed. A template the provider never
 * took (its submission did not finish) is answered as stored.
 */
export async function syncWhatsAppTemplateStatus(services: AppServices, principal: Principal, id: string) {
  const template = await findOwnedWhatsAppTemplate(services, principal, id);
  const providerTemplateId = template.providerTemplateId;
  if (!providerTemplateId) return template;
  const provider = whatsAppProviderOf(services);
  const businessAccountId = await businessAccountOf(services, principal.workspaceId).catch(() => undefined);
  const review = await askWhatsAppProvider(() => provider.getTemplate(providerTemplateId, businessAccountId));
  const changed =
    review.status !== template.status ||
    review.rejectedReason !== template.rejectedReason ||
    review.qualityRating !== template.qualityRating;
  if (!changed) return template;
  const updated = await storeTemplateReview(services.db, principal.workspaceId, template.id, review);
  // Deleted while the provider was asked: the same 403 as any template that is not there.
  return findOwned(principal, id, async () => updated[0]);
}

/** The template as the API answers it. */
export function whatsAppTemplateView(template: WhatsAppTemplate) {
  return {
    id: template.id,
    name: template.name,
    language: template.language,
    category: template.category,
    body: template.body,
    variableCount: template.variableCount,
    status: template.status,
    rejectedReason: template.rejectedReason,
    qualityRating: template.qualityRating,
    providerTemplateId: template.providerTemplateId,
    statusUpdatedAt: template.statusUpdatedAt.toISOString(),
    createdAt: template.createdAt.toISOString(),
  };
}
