import type { Prisma } from '../../generated/prisma/client';
import type { SimulatorsSetting } from '../simulators';
import { ErrorCode } from '../error-codes';
import { Refusal } from '../refusal';
import { liveWhatsAppConnectionOf } from './connections';

/** What the rule reads of a sender. */
export interface SenderBinding {
  id: string;
  workspaceId: string;
  e164: string;
  connectionId: string | null;
}

/** The refusal of a sender no Meta connection carries while SIMULATORS is disabled (docs/configuration.md#simulators). */
export const unboundSenderRefusal = (sender: Pick<SenderBinding, 'id' | 'e164'>) =>
  new Refusal(ErrorCode.no_whatsapp_connection, {
    senderId: sender.id,
    e164: sender.e164,
    detail: `the WhatsApp sender ${sender.e164} is bound to no live Meta connection, and simulated messages are disabled: connect it through one (whatsapp sender connect --connection)`,
  });

/**
 * While SIMULATORS is disabled, a sender must be bound to a live Meta connection of its workspace: nothing else would
 * carry its messages but the simulated provider, which does not run in production (409 no_whatsapp_connection naming
 * the sender). Enabled: the simulated provider carries them, and nothing is refused.
 */
export async function assertSenderConnected(
  db: Prisma.TransactionClient,
  simulators: SimulatorsSetting,
  sender: SenderBinding,
): Promise<void> {
  if (simulators !== 'disabled') return;
  if (!(await boundToLiveConnection(db, sender))) throw unboundSenderRefusal(sender);
}

/** Whether a live Meta connection of its workspace carries the sender's messages (else only a simulator could). */
async function boundToLiveConnection(
  db: Prisma.TransactionClient,
  sender: Pick<SenderBinding, 'workspaceId' | 'connectionId'>,
): Promise<boolean> {
  if (!sender.connectionId) return false;
  return (await liveWhatsAppConnectionOf(db, sender.workspaceId, sender.connectionId)) !== null;
}

/**
 * Whether a message of the sender is free: SIMULATORS enabled (development) and the sender carried by the simulated
 * provider, bound to no live Meta connection (docs/configuration.md#simulators). Disabled, such a message is refused
 * before; billed (the tests), it is charged as a real one.
 */
export async function isFreeSimulatedMessage(
  db: Prisma.TransactionClient,
  simulators: SimulatorsSetting,
  senderId: string,
): Promise<boolean> {
  if (simulators !== 'enabled') return false;
  const sender = await db.whatsAppSender.findUnique({
    where: { id: senderId },
    select: { workspaceId: true, connectionId: true },
  });
  return sender !== null && !(await boundToLiveConnection(db, sender));
}

/** assertSenderConnected of a WHATSAPP campaign's sender (its messaging, PUT /whatsapp/campaigns/{id}); none set: nothing. */
export async function assertCampaignSenderConnected(
  db: Prisma.TransactionClient,
  simulators: SimulatorsSetting,
  campaignId: string,
): Promise<void> {
  if (simulators !== 'disabled') return;
  const settings = await db.whatsAppCampaignSettings.findUnique({
    where: { campaignId },
    select: { senderId: true },
  });
  const sender =
    settings &&
    (await db.whatsAppSender.findUnique({
      where: { id: settings.senderId },
      select: { id: true, workspaceId: true, e164: true, connectionId: true },
    }));
  if (sender) await assertSenderConnected(db, simulators, sender);
}
