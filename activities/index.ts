import { createEgress } from '../lib/http/egress';
import { bindActivities } from './bind-activities';
import type { ActivityDependencies } from './dependencies';
import {
  callJourneyWebhook,
  loadJourneyRun,
  recordJourneyDecision,
  recordJourneyRun,
  sendWhatsAppTemplate,
  untilLocalTime,
} from './journeys/journeys';
import { createEnrollmentActivities } from './dial-ladder/enrollment';
import { createCallActivities } from './dial-ladder/calls';
import { createLeadActivities } from './leads/leads';
import { createCampaignActivities } from './campaigns/campaigns';
import { deliverWebhook, enqueueLeadFinished, giveUpWebhook } from './result-webhooks/result-webhooks';
import { createCallIntelligenceActivities } from './call-intelligence/call-intelligence';
import { createTestCallActivities } from './test-calls/test-calls';
import { createCallAftermathActivities } from './calls/call-aftermath';
import {
  failWhatsAppMessage,
  resolveAmbiguousSend,
  sendWhatsAppMessage,
  voidWhatsAppMessageHold,
} from './whatsapp/whatsapp-messages';
import {
  leadMessageStatus,
  leadPhone,
  prepareMessageLead,
  recordLeadMessage,
  reserveSenderSlot,
} from './whatsapp/whatsapp-leads';
import { sendJourneyWhatsApp } from './whatsapp/whatsapp-journeys';
import {
  orderNotificationDelay,
  prepareOrderNotification,
  scheduleOrderNotifications,
} from './commerce/order-notifications';
import { failCrmDelivery, finishCrmDelivery, processCrmDelivery } from './crm/crm-deliveries';
import { failCrmImport, importCrmPage } from './crm/crm-import';

export type { ActivityDependencies } from './dependencies';

/**
 * The main worker's activities written as named functions, by the name Temporal registers each under (a workflow and
 * every recorded history name it: never renamed).
 */
const mainWorkerActivities = {
  enqueueLeadFinished,
  deliverWebhook,
  giveUpWebhook,
  loadJourneyRun,
  recordJourneyRun,
  recordJourneyDecision,
  untilLocalTime,
  callJourneyWebhook,
  sendWhatsAppTemplate,
  sendWhatsAppMessage,
  resolveAmbiguousSend,
  failWhatsAppMessage,
  voidWhatsAppMessageHold,
  prepareMessageLead,
  reserveSenderSlot,
  recordLeadMessage,
  leadPhone,
  leadMessageStatus,
  sendJourneyWhatsApp,
  scheduleOrderNotifications,
  orderNotificationDelay,
  prepareOrderNotification,
  processCrmDelivery,
  finishCrmDelivery,
  failCrmDelivery,
  importCrmPage,
  failCrmImport,
};

/**
 * Every activity of the main worker, bound to its dependencies. The worker wires in the real ones; tests
 * pass their own. The export job's activities are not here: the export worker runs them on a task queue
 * of its own (activities/exports/exports.ts, bound in worker/create-export-worker.ts).
 */
export function createActivities(dependencies: ActivityDependencies) {
  // One egress guard for the worker's journey and result webhooks, built once here when the worker gives none.
  const bound = { ...dependencies, egress: dependencies.egress ?? createEgress() };
  return {
    ...createCallActivities(dependencies),
    ...createLeadActivities(dependencies),
    ...createCampaignActivities(dependencies),
    ...createEnrollmentActivities(dependencies),
    ...createCallIntelligenceActivities(dependencies),
    ...createTestCallActivities(dependencies),
    ...createCallAftermathActivities(dependencies),
    ...bindActivities(bound, mainWorkerActivities),
  };
}

export type Activities = ReturnType<typeof createActivities>;
