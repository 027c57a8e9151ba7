import { ZodError } from 'zod';
import type { Prisma } from '../../generated/prisma/client';
import { ErrorCode } from '../../lib/error-codes';
import type { WhatsAppCampaignSettingsInput } from '../../lib/whatsapp/campaign-settings';
import { assertSenderConnected } from '../../lib/whatsapp/simulator-stand-in';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import { findOwnedCampaign } from '../campaigns/campaigns';
import type { AppServices } from '../app-services';
import { assertSenderSendable, assertTemplateSendable } from './whatsapp-sendable';
import {
  upsertWhatsAppCampaignSettings,
  whatsAppCampaignSettingsOf,
  whatsAppSenderWhere,
  whatsAppTemplateWhere,
} from './whatsapp-store';

const invalid = (path: Array<string | number>, message: string, input: unknown) =>
  new ZodError([{ code: 'custom', path, message, input }]);

const viewOf = (settings: {
  campaignId: string;
  senderId: string;
  templateId: string;
  variables: Prisma.JsonValue;
  sendingWindow: Prisma.JsonValue;
  updatedAt: Date;
}) => ({
  campaignId: settings.campaignId,
  senderId: settings.senderId,
  templateId: settings.templateId,
  variables: settings.variables as WhatsAppCampaignSettingsInput['variables'],
  sendingWindow: settings.sendingWindow as WhatsAppCampaignSettingsInput['sendingWindow'],
  updatedAt: settings.updatedAt.toISOString(),
});

/** A WHATSAPP-channel campaign of the workspace; another channel: 409 campaign_not_whatsapp. */
async function whatsAppCampaign(services: AppServices, principal: Principal, campaignId: string) {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  if (campaign.channel !== 'WHATSAPP')
    throw new Refusal(ErrorCode.campaign_not_whatsapp, {
      detail: `the campaign's channel is ${campaign.channel}: only WHATSAPP campaigns send messages`,
    });
  return campaign;
}

/**
 * Sets a WHATSAPP campaign's messaging (docs/features/whatsapp/campaigns.md): a connected sender and an
 * APPROVED template of the workspace, a source for each of the template's variables {{1}}..{{n}} (no
 * more, no fewer), and the sending window. Leads already sent keep their message; leads not yet sent
 * use the new settings. A STOPPED campaign's settings no longer change anything: 409
 * invalid_campaign_transition would mislead, so it is allowed and simply unused.
 */
export async function putWhatsAppCampaign(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  input: WhatsAppCampaignSettingsInput,
) {
  const campaign = await whatsAppCampaign(services, principal, campaignId);
  const { workspaceId } = principal;
  const [sender, template] = await Promise.all([
    whatsAppSenderWhere(services.db, { id: input.senderId, workspaceId }),
    whatsAppTemplateWhere(services.db, { id: input.templateId, workspaceId }),
  ]);
  assertSenderSendable(sender, input.senderId, ['senderId']);
  await assertSenderConnected(services.db, services.simulators, sender);
  assertTemplateSendable(template, input.templateId, ['templateId']);
  const { variableCount } = template;
  const expected = Array.from({ length: variableCount }, (_, index) => String(index + 1));
  const given = Object.keys(input.variables).sort((a, b) => Number(a) - Number(b));
  if (given.join() !== expected.join())
    throw invalid(
      ['variables'],
      variableCount === 0
        ? 'the template has no variables: give {}'
        : `the template's variables are ${expected.map((n) => `{{${n}}}`).join(', ')}: give a source for each, and no other`,
      input.variables,
    );
  const data = {
    senderId: sender.id,
    templateId: template.id,
    variables: input.variables as Prisma.InputJsonValue,
    sendingWindow: input.sendingWindow as Prisma.InputJsonValue,
  };
  const stored = await upsertWhatsAppCampaignSettings(services.db, campaign.id, data);
  return viewOf(stored);
}

/** A WHATSAPP campaign's messaging; never set: 404 not_found. */
export async function getWhatsAppCampaign(services: AppServices, principal: Principal, campaignId: string) {
  const campaign = await whatsAppCampaign(services, principal, campaignId);
  const stored = await whatsAppCampaignSettingsOf(services.db, campaign.id);
  if (!stored)
    throw new Refusal(ErrorCode.not_found, { detail: 'the campaign has no WhatsApp messaging yet (PUT it)' });
  return viewOf(stored);
}
