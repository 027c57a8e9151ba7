import { createEgress } from '../lib/http/egress';
import { bindActivities } from './bind-activities';
import type { ActivityDependencies } from './dependencies';
import { enrollNextContacts } from './dial-ladder/enrollment';
import { attemptCall, dialCall, placeCall, prepareLead, reconcileCall, settleLead } from './dial-ladder/calls';
import { campaignStatusOfLead, finishLead, nextCallingSlot } from './leads/leads';
import { notifyCampaignLeads, setCampaignStatus } from './campaigns/campaigns';
import { ensureCallTranscript, extractCallFields, storeCallIntelligence } from './call-intelligence/call-intelligence';
import { billTestCall, dialTestCall } from './test-calls/test-calls';
import { afterCallEnded } from './calls/call-aftermath';
import { watchInboundCall } from './calls/inbound-calls';
import {
  callJourneyWebhook,
  loadJourneyRun,
  recordJourneyDecision,
  recordJourneyRun,
  sendWhatsAppTemplate,
  untilLocalTime,
} from './journeys/journeys';
import { deliverWebhook, enqueueLeadFinished, giveUpWebhook } from './result-webhooks/result-webhooks';
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
import { bookAppointment } from './calendar/appointments';

export type { ActivityDependencies } from './dependencies';

/**
 * Every activity of the main worker written as a named function over its dependencies, by the name Temporal registers
 * it under (a workflow and every recorded history name it: never renamed).
 */
const mainWorkerActivities = {
  // The dial ladder (activities/dial-ladder/).
  prepareLead,
  dialCall,
  attemptCall,
  settleLead,
  reconcileCall,
  placeCall,
  enrollNextContacts,
  // Every lead's workflow (activities/leads/leads.ts).
  nextCallingSlot,
  finishLead,
  campaignStatusOfLead,
  // A campaign's transitions (activities/campaigns/campaigns.ts).
  setCampaignStatus,
  notifyCampaignLeads,
  // Call intelligence (activities/call-intelligence/call-intelligence.ts).
  ensureCallTranscript,
  extractCallFields,
  storeCallIntelligence,
  // Test calls (activities/test-calls/test-calls.ts).
  dialTestCall,
  billTestCall,
  // What follows a call's end (activities/calls/call-aftermath.ts).
  afterCallEnded,
  // An inbound call watched until it ends (activities/calls/inbound-calls.ts).
  watchInboundCall,
  // Result webhooks (activities/result-webhooks/result-webhooks.ts).
  enqueueLeadFinished,
  deliverWebhook,
  giveUpWebhook,
  // Journey runs (activities/journeys/journeys.ts).
  loadJourneyRun,
  recordJourneyRun,
  recordJourneyDecision,
  untilLocalTime,
  callJourneyWebhook,
  sendWhatsAppTemplate,
  // WhatsApp messages, leads and journey nodes (activities/whatsapp/).
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
  // Order notifications (activities/commerce/order-notifications.ts).
  scheduleOrderNotifications,
  orderNotificationDelay,
  prepareOrderNotification,
  // CRM deliveries and imports (activities/crm/).
  processCrmDelivery,
  finishCrmDelivery,
  failCrmDelivery,
  importCrmPage,
  failCrmImport,
  // Appointments booked during calls (activities/calendar/appointments.ts).
  bookAppointment,
};

/**
 * Every activity of the main worker, bound to its dependencies. The worker wires in the real ones; tests
 * pass their own. The export job's activities are not here: the export worker runs them on a task queue
 * of its own (activities/exports/exports.ts, bound in worker/create-export-worker.ts); nor are the recording
 * analyses', which the speech workers run (worker/create-speech-worker.ts).
 */
export function createActivities(dependencies: ActivityDependencies) {
  // One egress guard for the worker's journey and result webhooks, built once here when the worker gives none.
  return bindActivities({ ...dependencies, egress: dependencies.egress ?? createEgress() }, mainWorkerActivities);
}

export type Activities = ReturnType<typeof createActivities>;
