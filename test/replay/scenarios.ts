import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import type { Database } from '../../lib/database';
import type { CampaignAction, CampaignStatus } from '../../lib/campaigns/campaign-transitions';
import { campaignWorkflowId, contactEnrollmentWorkflowId, leadWorkflowId } from '../../lib/temporal/workflow-ids';
import { addMember, createWorkspace } from '../../lib/door/workspace-admin';
import type { campaignWorkflow } from '../../workflows/campaigns/campaign';
import type { contactEnrollmentWorkflow } from '../../workflows/dial-ladder/contact-enrollment';
import {
  campaignTransitionUpdate,
  campaignChangedSignal,
  journeyRunStateQuery,
  leadStateQuery,
  recoverSignal,
  recoverUpdate,
} from '../../lib/temporal/messages';
import { ALWAYS_OPEN, QUICK_LADDER, SINGLE_ATTEMPT } from '../support/ladders';
import { journey } from '../support/journeys';
import { publishJourney, saveJourney } from '../../api/journeys/journeys';
import type { JourneyDefinition } from '../../lib/journeys';
import type { journeyRunWorkflow } from '../../workflows/journeys/journey-run';
import { exportJobScenario } from './export-job-scenario';
import { liveSheetScenario } from './live-sheet-scenario';
import { callIntelligenceScenario } from './call-intelligence-scenario';
import { cancelledOrderNotificationScenario, crmDeliveryScenario, orderNotificationScenario } from './crm-scenario';
import { crmImportScenario, type StoreTwinContext } from './crm-import-scenario';
import type { MetaTwinFaults } from '../../simulators/meta-twin/server';
import {
  journeyWhatsAppScenario,
  leadMessageHandOverOnceScenario,
  leadMessageHeldScenario,
  leadMessageScenario,
  whatsAppHandOverOnceScenario,
  whatsAppMessageScenario,
} from './whatsapp-scenario';
import type { WhatsAppProvider } from '../../lib/whatsapp/provider';
import { completedSpeechAnalysisScenario, failedSpeechAnalysisScenario } from './speech-analysis-scenario';
import { leadLadderScenarios } from './lead-ladder-scenario';
import { twilioScenarios } from './twilio-scenario';
import { conversationToolScenarios } from './conversation-tools-scenario';
import type { Keyring } from '../../lib/secrets/keyring';
import { billedTestCallScenario, voidedTestCallScenario } from './test-call-scenario';
import { inboundCallEndedByItsEvent } from './inbound-call-scenario';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Runs recorded into test/histories/<name>.json by `npm run record-histories` and replayed by
 * test/replay.test.ts. A change to workflow code that would break runs in flight fails that replay.
 */
export interface ReplayScenario {
  name: string;
  /**
   * The recording API's conversation engine for this scenario (AppServices.conversationEngine): relay holds its
   * Twilio calls over ConversationRelay, where the conversation tools run; unset, the script walk's Gathers, as the
   * scenarios recorded before the dialogue engine became the product's default were.
   */
  conversationEngine?: 'relay';
  run(context: ScenarioContext): Promise<string>;
}

interface ScenarioContext {
  db: Database;
  client: Client;
  taskQueue: string;
  /** The simulated WhatsApp provider, for the WhatsApp scenarios. */
  whatsappProvider?: WhatsAppProvider;
  /** Tells it which faults to make (a lost answer). */
  whatsappFaults?: (faults: MetaTwinFaults) => void;
  /** The Twilio twin and the key ring of its connections, for the Twilio scenarios. */
  twilio?: { twinUrl: string; keyring: Keyring };
  /** The store twin's Admin API and the key ring of the connections' tokens, for the CRM import scenario. */
  store?: StoreTwinContext;
}

async function campaignFor(db: Database, name: string, status: 'DRAFT' | 'RUNNING') {
  const { id: workspaceId } = await createWorkspace(db, `Replay ${name}`, {});
  await addMember(db, workspaceId, `${name}@replay.localhost`, 'owner');
  return db.campaign.create({
    data: { workspaceId, name, acceptsLeadPush: true, status, dialLadder: QUICK_LADDER, callingWindow: ALWAYS_OPEN },
  });
}

async function startLead(
  { db, client, taskQueue }: ScenarioContext,
  campaign: { id: string; workspaceId: string },
  key: string,
  phone: string,
) {
  const workflowId = leadWorkflowId(campaign.id, key);
  const lead = await db.lead.create({
    data: {
      workspaceId: campaign.workspaceId,
      campaignId: campaign.id,
      idempotencyKey: key,
      phone,
      workflowId,
      requestId: crypto.randomUUID(),
    },
  });
  return client.workflow.start('leadDialWorkflow', { workflowId, taskQueue, args: [{ leadId: lead.id }] });
}

function transition(
  { client, taskQueue }: ScenarioContext,
  campaign: { id: string; status: CampaignStatus },
  action: CampaignAction,
) {
  return client.workflow.executeUpdateWithStart(campaignTransitionUpdate, {
    args: [action],
    startWorkflowOperation: new WithStartWorkflowOperation<typeof campaignWorkflow>('campaignWorkflow', {
      workflowId: campaignWorkflowId(campaign.id),
      taskQueue,
      args: [{ campaignId: campaign.id, status: campaign.status }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
}

function leadDialScenario(name: string, phone: string, onDoNotCallList = false): ReplayScenario {
  return {
    name,
    async run(context) {
      const campaign = await campaignFor(context.db, name, 'RUNNING');
      if (onDoNotCallList)
        await context.db.doNotCall.create({ data: { workspaceId: campaign.workspaceId, phone, source: 'api' } });
      const handle = await startLead(context, campaign, name, phone);
      await handle.result();
      return handle.workflowId;
    },
  };
}

const pausedThenResumed = (name: string): ReplayScenario => ({
  name,
  async run(context) {
    const campaign = await campaignFor(context.db, name, 'DRAFT');
    await transition(context, campaign, 'start');
    const handle = await startLead(context, campaign, 'paused', '+14155550125');
    while ((await handle.query(leadStateQuery)).phase !== 'waiting_for_rung')
      await new Promise((r) => setTimeout(r, 50));
    await transition(context, campaign, 'pause');
    while ((await handle.query(leadStateQuery)).phase !== 'waiting_for_campaign')
      await new Promise((r) => setTimeout(r, 50));
    await transition(context, campaign, 'resume');
    await handle.result();
    return handle.workflowId;
  },
});

/**
 * Held by its campaign and woken by campaignChanged itself (workflows/campaigns/campaign-hold.ts), which the other
 * lead-dial histories never are: a signal during a rung's delay (the lead asks its campaign's status, RUNNING, and
 * waits on), then, paused, a signal to the attempt on hold (it tries again, still on hold), and the resume with its
 * signal. Recorded on leadDialWorkflow's own copy of the hold, before the helper, so its replay shows the helper gives
 * the same commands.
 */
const leadDialHeldByCampaignSignals: ReplayScenario = {
  name: 'lead-dial-held-by-campaign-signals',
  async run(context) {
    const campaign = await campaignFor(context.db, 'lead-dial-held', 'DRAFT');
    // A second rung long enough for the signal and the pause to come during it, on a loaded machine too.
    await context.db.campaign.update({
      where: { id: campaign.id },
      data: {
        dialLadder: { ...QUICK_LADDER, rungs: [{ delaySeconds: 0 }, { delaySeconds: 10 }, { delaySeconds: 1 }] },
      },
    });
    await transition(context, campaign, 'start');
    const handle = await startLead(context, campaign, 'held', '+14155550125');
    const phaseIs = async (phase: string) => {
      while ((await handle.query(leadStateQuery)).phase !== phase) await new Promise((r) => setTimeout(r, 50));
    };
    await phaseIs('waiting_for_rung');
    await handle.signal(campaignChangedSignal);
    await transition(context, campaign, 'pause');
    await phaseIs('waiting_for_campaign');
    await handle.signal(campaignChangedSignal);
    await new Promise((r) => setTimeout(r, 500));
    await phaseIs('waiting_for_campaign');
    await transition(context, campaign, 'resume');
    // These leads carry no CampaignId, so the campaign's own signal misses them: it is sent here.
    await handle.signal(campaignChangedSignal);
    await handle.result();
    return handle.workflowId;
  },
};

/** A running campaign's calling list of three contacts, enrolled as leads until none is left. */
const contactsEnrolled: ReplayScenario = {
  name: 'contact-enrollment-calling-list',
  async run(context) {
    const campaign = await campaignFor(context.db, 'contact-enrollment', 'RUNNING');
    for (const phone of ['+14155550120', '+14155550121', '+14155550125']) {
      const contact = await context.db.contact.create({
        data: { workspaceId: campaign.workspaceId, phone, name: `Contact ${phone.slice(-3)}` },
      });
      await context.db.campaignContact.create({ data: { campaignId: campaign.id, contactId: contact.id } });
    }
    const handle = await context.client.workflow.start<typeof contactEnrollmentWorkflow>('contactEnrollmentWorkflow', {
      workflowId: contactEnrollmentWorkflowId(campaign.id),
      taskQueue: context.taskQueue,
      args: [{ campaignId: campaign.id }],
    });
    await handle.result();
    return handle.workflowId;
  },
};

/**
 * A campaign started, paused, resumed and stopped. Recorded as 'campaign-start-pause-resume-stop' before
 * 'campaign-answer-before-waking' (each Update answered after its leads were woken; a new recording takes the new
 * branch, so that history is kept as committed), and as 'campaign-start-pause-resume-stop-answer-first' since.
 */
const campaignLifecycle = (name: string): ReplayScenario => ({
  name,
  async run(context) {
    const campaign = await campaignFor(context.db, 'lifecycle', 'DRAFT');
    for (const action of ['start', 'pause', 'resume', 'stop'] as const) await transition(context, campaign, action);
    const handle = context.client.workflow.getHandle(campaignWorkflowId(campaign.id));
    await handle.result();
    return handle.workflowId;
  },
});

/** A journey's run for a new lead of a JOURNEY campaign, started as the lead dispatcher starts it. */
async function startJourneyRun(
  { db, client, taskQueue }: ScenarioContext,
  name: string,
  definition: JourneyDefinition,
  phone: string,
) {
  const { id: workspaceId } = await createWorkspace(db, `Replay ${name}`, { features: ['workflows'] });
  const published = await publishJourney(
    db,
    workspaceId,
    (await saveJourney(db, workspaceId, { name, definition })).id,
  );
  const campaign = await db.campaign.create({
    data: {
      workspaceId,
      name,
      kind: 'JOURNEY',
      journeyId: published.id,
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder: SINGLE_ATTEMPT,
      callingWindow: ALWAYS_OPEN,
    },
  });
  const workflowId = leadWorkflowId(campaign.id, name);
  const lead = await db.lead.create({
    data: {
      workspaceId,
      campaignId: campaign.id,
      idempotencyKey: name,
      phone,
      workflowId,
      requestId: crypto.randomUUID(),
    },
  });
  await db.journeyRun.create({
    data: {
      id: lead.id,
      workspaceId,
      journeyId: published.id,
      revision: 1,
      campaignId: campaign.id,
      leadId: lead.id,
      temporalWorkflowId: workflowId,
      trigger: { phone, name: null, fields: { plan: 'pro' } },
      startedBy: 'lead_push',
    },
  });
  return client.workflow.start<typeof journeyRunWorkflow>('journeyRunWorkflow', {
    workflowId,
    taskQueue,
    args: [{ runId: lead.id }],
  });
}

/** A loopback receiver for webhook nodes: answers every request with the given status. */
async function withReceiver<T>(status: number, use: (url: string) => Promise<T>): Promise<T> {
  const server = http.createServer((req, res) =>
    req.resume().on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end('{"ok":true}')),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/** A journey run through a call node, a branch, a webhook, a wait and a WhatsApp node to its end. */
const journeyToTheEnd = (name: string, runName: string): ReplayScenario => ({
  name,
  run: (context) =>
    withReceiver(200, async (url) => {
      const handle = await startJourneyRun(
        context,
        runName,
        journey(
          [
            { id: 'start', type: 'start', data: { fields: [{ name: 'plan', type: 'string' }] } },
            { id: 'call1', type: 'call' },
            {
              id: 'route',
              type: 'branch',
              data: {
                rules: [
                  { handle: 'reached', when: { variable: 'call1.outcome', operator: 'equals', value: 'answered' } },
                ],
                defaultHandle: 'missed',
              },
            },
            { id: 'notify', type: 'webhook', data: { url, body: '{"plan":"{{start.fields.plan}}"}' } },
            { id: 'pause', type: 'wait', data: { seconds: 1 } },
            { id: 'greet', type: 'whatsapp', data: { templateName: 'welcome', parameters: ['{{start.fields.plan}}'] } },
            { id: 'done', type: 'end' },
            { id: 'gaveUp', type: 'end' },
          ],
          [
            ['start', 'call1'],
            ['call1', 'route'],
            ['route', 'notify', 'reached'],
            ['route', 'gaveUp', 'missed'],
            ['notify', 'pause'],
            ['pause', 'greet'],
            ['greet', 'done'],
          ],
        ),
        '+14155550120',
      );
      await handle.result();
      return handle.workflowId;
    }),
});

const journeyRecoveredBySignal: ReplayScenario = {
  name: 'journey-recovered-by-signal',
  run: (context) =>
    withReceiver(400, async (url) => {
      const handle = await startJourneyRun(
        context,
        'journey-recovered',
        journey(
          [
            { id: 'start', type: 'start' },
            { id: 'hook', type: 'webhook', data: { url } },
            { id: 'done', type: 'end' },
          ],
          [
            ['start', 'hook'],
            ['hook', 'done'],
          ],
        ),
        '+14155550121',
      );
      while ((await handle.query(journeyRunStateQuery)).status !== 'needs_recovery')
        await new Promise((r) => setTimeout(r, 50));
      await handle.signal(recoverSignal, { action: 'skip', output: { status: 200 }, decidedBy: 'replay@ops' });
      await handle.result();
      return handle.workflowId;
    }),
};

const journeyReviewedByUpdate: ReplayScenario = {
  name: 'journey-review-decided-by-update',
  async run(context) {
    const handle = await startJourneyRun(
      context,
      'journey-reviewed',
      journey(
        [
          { id: 'start', type: 'start' },
          { id: 'look', type: 'review', data: { instructions: 'Approve the lead' } },
          { id: 'done', type: 'end' },
        ],
        [
          ['start', 'look'],
          ['look', 'done'],
        ],
      ),
      '+14155550122',
    );
    while ((await handle.query(journeyRunStateQuery)).status !== 'needs_recovery')
      await new Promise((r) => setTimeout(r, 50));
    await handle.executeUpdate(recoverUpdate, {
      args: [{ action: 'skip', output: { decision: 'approved' }, decidedBy: 'replay@ops', via: 'api' }],
    });
    await handle.result();
    return handle.workflowId;
  },
};

export const replayScenarios: ReplayScenario[] = [
  // The simulated carrier: the last digit scripts the outcome (see simulators/simulated-carrier/timeline.ts).
  leadDialScenario('lead-dial-answered', '+14155550120'),
  // The full ladder: three busy attempts with their rung delays.
  leadDialScenario('lead-dial-busy-full-ladder', '+14155550125'),
  leadDialScenario('lead-dial-invalid-number', '+14155550129'),
  leadDialScenario('lead-dial-do-not-call', '+14155550120', true),
  pausedThenResumed('lead-dial-paused-then-resumed'),
  // The same runs after the lead's bookkeeping became local activities (patch 'local-bookkeeping').
  leadDialScenario('lead-dial-busy-full-ladder-local-bookkeeping', '+14155550125'),
  pausedThenResumed('lead-dial-paused-then-resumed-local-bookkeeping'),
  // The asynchronous carrier path (patch 'async-carrier'): dialCall answers the call id, the terminal
  // event arrives as callEndedSignal from the event endpoint.
  leadDialScenario('lead-dial-answered-async-carrier', '+14155550120'),
  leadDialScenario('lead-dial-busy-full-ladder-async-carrier', '+14155550125'),
  leadDialScenario('lead-dial-voicemail-async-carrier', '+14155550127'),
  // After the call ends the lead runs afterCallEnded (patch 'after-call-ended'): an answered call's
  // intelligence is started; a failed call makes its campaign's carrier breaker look.
  leadDialScenario('lead-dial-answered-after-call-ended', '+14155550120'),
  leadDialScenario('lead-dial-failed-after-call-ended', '+14155550128'),
  // Since patch 'aftermath-when-needed' only an answered, voicemail or failed call runs afterCallEnded,
  // as a local activity; a busy ladder runs none.
  leadDialScenario('lead-dial-answered-aftermath-when-needed', '+14155550120'),
  leadDialScenario('lead-dial-busy-full-ladder-aftermath-when-needed', '+14155550125'),
  // Since patch 'dial-in-workflow-task' dialCall runs as a local activity.
  leadDialScenario('lead-dial-answered-dial-in-workflow-task', '+14155550120'),
  leadDialScenario('lead-dial-busy-full-ladder-dial-in-workflow-task', '+14155550125'),
  // Held by a pause between rungs (these leads carry no CampaignId, so the campaign's signal misses them:
  // the lead finds the resume by its own five-minute look; recording takes that long).
  pausedThenResumed('lead-dial-paused-then-resumed-async-carrier'),
  // Woken by campaignChanged in a rung's delay and on hold (the campaign's hold made one helper).
  leadDialHeldByCampaignSignals,
  campaignLifecycle('campaign-start-pause-resume-stop'),
  campaignLifecycle('campaign-start-pause-resume-stop-answer-first'),
  journeyToTheEnd('journey-call-branch-webhook-wait', 'journey-to-the-end'),
  contactsEnrolled,
  journeyRecoveredBySignal,
  journeyReviewedByUpdate,
  exportJobScenario,
  liveSheetScenario,
  // Call intelligence of a call with a stored transcript (workflows/call-intelligence/call-intelligence.ts).
  callIntelligenceScenario,
  billedTestCallScenario,
  voidedTestCallScenario,
  completedSpeechAnalysisScenario,
  failedSpeechAnalysisScenario,
  whatsAppMessageScenario,
  leadMessageScenario,
  // The WHATSAPP lead's hold woken by campaignChanged (the campaign's hold made one helper).
  leadMessageHeldScenario,
  whatsAppHandOverOnceScenario,
  leadMessageHandOverOnceScenario,
  journeyWhatsAppScenario,
  // The store's side (issue 17): a webhook's delivery, an order's notification sent and one skipped.
  crmDeliveryScenario,
  orderNotificationScenario,
  cancelledOrderNotificationScenario,
  // The lean ladder (leadLadderWorkflow, 9d6d50d): every new CLASSIC lead's workflow, woken by the line queue.
  ...leadLadderScenarios,
  // A journey's call node since patch 'call-node-lean-ladder': its child is the lean ladder.
  journeyToTheEnd('journey-call-branch-webhook-wait-lean-ladder', 'journey-to-the-end-lean-ladder'),
  // Since patch 'call-node-ladder-v2': the child is the current ladder (leadLadderWorkflowV2), its commands the same.
  journeyToTheEnd('journey-call-branch-webhook-wait-ladder-v2', 'journey-to-the-end-ladder-v2'),
  // The lean ladder on the Twilio path (issue 29): the script walk answered, and a voicemail left.
  ...twilioScenarios,
  // The conversation tools' outcomes over ConversationRelay (issue 30): a callback at its booked time, an opt-out, a
  // transfer.
  ...conversationToolScenarios,
  // The Shopify Admin import (issue 31): a store's customers read page by page through the store twin.
  crmImportScenario,
  // An inbound call watched until it ends (issue 42): ended by its event.
  inboundCallEndedByItsEvent,
];
