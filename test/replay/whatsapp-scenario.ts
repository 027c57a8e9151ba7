import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Principal } from '../../api/door/principal';
import type { AppServices } from '../../api/app-services';
import { createWhatsAppTemplate } from '../../api/whatsapp/whatsapp-templates';
import { sendWhatsAppMessage } from '../../api/whatsapp/whatsapp-sending';
import type { Database } from '../../lib/database';
import type { WhatsAppProvider } from '../../lib/whatsapp/provider';
import { connectWhatsAppSender } from '../../lib/whatsapp/senders';
import type { MetaTwinFaults } from '../../simulators/meta-twin/server';
import { journeyRunWorkflowId, leadWorkflowId, whatsAppMessageWorkflowId } from '../../lib/temporal/workflow-ids';
import { campaignChangedSignal, leadMessageStateQuery } from '../../lib/temporal/messages';
import { addMember, createWorkspace, grantCredits } from '../../lib/door/workspace-admin';
import type { journeyRunWorkflow } from '../../workflows/journeys/journey-run';
import type { leadMessageWorkflow } from '../../workflows/whatsapp/lead-message';
import { notifyingJourney, publishedJourney } from '../support/journeys';

export interface WhatsAppScenarioContext {
  db: Database;
  client: Client;
  taskQueue: string;
  /** The simulated provider the recording runs with (its webhooks reach the recording's API endpoint). */
  whatsappProvider?: WhatsAppProvider;
  /** Tells the simulated provider which faults to make (simulators/meta-twin/server.ts, MetaTwinFaults). */
  whatsappFaults?: (faults: MetaTwinFaults) => void;
}

const ALWAYS = { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] };

/** A workspace with credits, a connected sender and an APPROVED template (reviewed by the provider's webhook). */
export async function messagingWorkspace(
  { db, client, taskQueue, whatsappProvider }: WhatsAppScenarioContext,
  e164: string,
) {
  if (!whatsappProvider) throw new Error('the WhatsApp scenarios are recorded with a WhatsApp provider');
  const { id: workspaceId } = await createWorkspace(db, 'Replay WhatsApp', {});
  await grantCredits(db, workspaceId, 10);
  await addMember(db, workspaceId, `whatsapp-${randomUUID()}@replay.localhost`, 'owner');
  const sender = await connectWhatsAppSender(db, { workspaceId, e164, provider: whatsappProvider.name });
  const services = {
    db,
    temporal: client,
    taskQueue,
    whatsapp: { provider: whatsappProvider },
  } as unknown as AppServices;
  const principal = { workspaceId, keyId: randomUUID() } as Principal;
  const template = await createWhatsAppTemplate(services, principal, {
    name: 'order_update',
    language: 'en_US',
    category: 'utility',
    body: 'Hi {{1}}, your order {{2}} has shipped.',
    examples: ['Ana', 'A-17'],
  });
  for (let tries = 0; tries < 200; tries++) {
    const row = await db.whatsAppTemplate.findUniqueOrThrow({ where: { id: template.id } });
    if (row.status === 'APPROVED') return { services, principal, workspaceId, senderId: sender.id, templateId: row.id };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the template was not approved');
}

/** POST /whatsapp/messages as the API sends one: handed over; delivered and read by webhooks. */
export const whatsAppMessageScenario = {
  name: 'whatsapp-message-handed-over',
  async run(context: WhatsAppScenarioContext): Promise<string> {
    const { services, principal, senderId, templateId } = await messagingWorkspace(context, '+14155557001');
    const { message } = await sendWhatsAppMessage(
      services,
      principal,
      { senderId, to: '+14155557101', template: { id: templateId, variables: ['Ana', 'A-17'] } },
      undefined,
    );
    const workflowId = whatsAppMessageWorkflowId(message.id);
    await context.client.workflow.getHandle(workflowId).result();
    return workflowId;
  },
};

/** A WHATSAPP campaign (RUNNING unless said) of a new messaging workspace and one lead of it, its workflow not started. */
async function whatsAppCampaignLead(
  context: WhatsAppScenarioContext,
  senderNumber: string,
  lead: { idempotencyKey: string; phone: string },
  status: 'RUNNING' | 'PAUSED' = 'RUNNING',
) {
  const { db } = context;
  const { workspaceId, senderId, templateId } = await messagingWorkspace(context, senderNumber);
  const campaign = await db.campaign.create({
    data: { workspaceId, name: 'Replay WhatsApp', channel: 'WHATSAPP', acceptsLeadPush: true, status },
  });
  await db.whatsAppCampaignSettings.create({
    data: {
      campaignId: campaign.id,
      senderId,
      templateId,
      variables: { '1': { field: 'name', fallback: 'there' }, '2': { value: 'A-17' } },
      sendingWindow: ALWAYS,
    },
  });
  const workflowId = leadWorkflowId(campaign.id, lead.idempotencyKey);
  const { id: leadId } = await db.lead.create({
    data: {
      workspaceId,
      campaignId: campaign.id,
      ...lead,
      name: 'Ana',
      workflowId,
      requestId: randomUUID(),
    },
  });
  const start = () =>
    context.client.workflow.start<typeof leadMessageWorkflow>('leadMessageWorkflow', {
      workflowId,
      taskQueue: context.taskQueue,
      searchAttributes: { CampaignId: [campaign.id], WorkspaceId: [workspaceId] },
      args: [{ leadId }],
    });
  return { workflowId, leadId, campaignId: campaign.id, start };
}

/** A WHATSAPP campaign's lead: paced, its message recorded and handed over, delivered by webhook, finished. */
export const leadMessageScenario = {
  name: 'lead-message-delivered',
  async run(context: WhatsAppScenarioContext): Promise<string> {
    const lead = await whatsAppCampaignLead(context, '+14155557002', {
      idempotencyKey: 'replay-lead',
      phone: '+14155557117', // the simulated provider: sent, delivered, never read
    });
    await (await lead.start()).result();
    return lead.workflowId;
  },
};

/**
 * A WHATSAPP lead held by its paused campaign and woken by campaignChanged (workflows/campaigns/campaign-hold.ts): a
 * signal while still paused (it asks the status and holds again), then the campaign running and a signal (it sends).
 * Recorded on the code before the hold was one helper (the workflow's own copy), so its replay shows the helper gives
 * the same commands.
 */
export const leadMessageHeldScenario = {
  name: 'lead-message-held-by-campaign-signals',
  async run(context: WhatsAppScenarioContext): Promise<string> {
    const lead = await whatsAppCampaignLead(
      context,
      '+14155557003',
      { idempotencyKey: 'replay-held-lead', phone: '+14155557117' },
      'PAUSED',
    );
    const handle = await lead.start();
    const phaseIs = async (phase: string) => {
      while ((await handle.query(leadMessageStateQuery)).phase !== phase)
        await new Promise((resolve) => setTimeout(resolve, 50));
    };
    await phaseIs('waiting_for_campaign');
    await handle.signal(campaignChangedSignal);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await phaseIs('waiting_for_campaign');
    await context.db.campaign.update({ where: { id: lead.campaignId }, data: { status: 'RUNNING' } });
    await handle.signal(campaignChangedSignal);
    await handle.result();
    return lead.workflowId;
  },
};

/** A journey's whatsapp node on the WhatsApp channel (since patched 'whatsapp-node-provider'). */
export const journeyWhatsAppScenario = {
  name: 'journey-whatsapp-node-channel',
  async run(context: WhatsAppScenarioContext): Promise<string> {
    const { db, client, taskQueue } = context;
    const { workspaceId } = await messagingWorkspace(context, '+14155557003');
    const definition = notifyingJourney('order_update', ['{{start.name}}', 'A-17']);
    const published = await publishedJourney(db, workspaceId, definition);
    const runId = randomUUID();
    const workflowId = journeyRunWorkflowId(runId);
    await db.journeyRun.create({
      data: {
        id: runId,
        workspaceId,
        journeyId: published.id,
        revision: published.revision,
        temporalWorkflowId: workflowId,
        trigger: { phone: '+14155557121', name: 'Ana', fields: {} },
        startedBy: 'replay',
      },
    });
    const handle = await client.workflow.start<typeof journeyRunWorkflow>('journeyRunWorkflow', {
      workflowId,
      taskQueue,
      args: [{ runId }],
    });
    await handle.result();
    return workflowId;
  },
};

/** Until the message's send is ambiguous (its answer lost), then the provider answers again. */
async function untilAmbiguous(context: WhatsAppScenarioContext, db: Database, where: { leadId?: string; id?: string }) {
  // A minute at most: the worker's first workflow task may wait for its bundle to load.
  for (let tries = 0; tries < 2_400; tries++) {
    const row = await db.whatsAppMessage.findFirst({ where });
    if (row?.handOver === 'ambiguous') {
      context.whatsappFaults!({});
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the send never became ambiguous');
}

/**
 * POST /whatsapp/messages whose send's answer is lost (since patched 'whatsapp-hand-over-once'): the run waits the
 * resend window, then resolves it as sent by the status its callback data brought.
 */
export const whatsAppHandOverOnceScenario = {
  name: 'whatsapp-hand-over-once',
  async run(context: WhatsAppScenarioContext): Promise<string> {
    if (!context.whatsappFaults) throw new Error('recorded with a provider that can lose answers');
    const { services, principal, senderId, templateId } = await messagingWorkspace(context, '+14155557004');
    context.whatsappFaults({ dropAnswerRate: 1, statusesAfterLostAnswerMs: 500 });
    const { message } = await sendWhatsAppMessage(
      services,
      principal,
      { senderId, to: '+14155557131', template: { id: templateId, variables: ['Ana', 'A-17'] } },
      undefined,
    );
    await untilAmbiguous(context, context.db, { id: message.id });
    const workflowId = whatsAppMessageWorkflowId(message.id);
    await context.client.workflow.getHandle(workflowId).result();
    return workflowId;
  },
};

/** A lead whose send's answer is lost (since patched 'lead-message-hand-over-once'): its status decides it. */
export const leadMessageHandOverOnceScenario = {
  name: 'lead-message-hand-over-once',
  async run(context: WhatsAppScenarioContext): Promise<string> {
    if (!context.whatsappFaults) throw new Error('recorded with a provider that can lose answers');
    const lead = await whatsAppCampaignLead(context, '+14155557005', {
      idempotencyKey: 'replay-lead-lost-answer',
      phone: '+14155557137',
    });
    context.whatsappFaults({ dropAnswerRate: 1, statusesAfterLostAnswerMs: 500 });
    const handle = await lead.start();
    await untilAmbiguous(context, context.db, { leadId: lead.leadId });
    await handle.result();
    return lead.workflowId;
  },
};
