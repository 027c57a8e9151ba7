import type { ActivityDependencies } from './dependencies';
import { bindActivities } from './bind-activities';
import { createJourneyActivities } from './journeys/journeys';
import { enrollNextContacts } from './dial-ladder/enrollment';
import { attemptCall, dialCall, placeCall, prepareLead, reconcileCall, settleLead } from './dial-ladder/calls';
import { campaignStatusOfLead, finishLead, nextCallingSlot } from './leads/leads';
import { notifyCampaignLeads, setCampaignStatus } from './campaigns/campaigns';
import { createResultWebhookActivities } from './result-webhooks/result-webhooks';
import { ensureCallTranscript, extractCallFields, storeCallIntelligence } from './call-intelligence/call-intelligence';
import { billTestCall, dialTestCall } from './test-calls/test-calls';
import { afterCallEnded } from './calls/call-aftermath';
import { createWhatsAppMessageActivities } from './whatsapp/whatsapp-messages';
import { createWhatsAppLeadActivities } from './whatsapp/whatsapp-leads';
import { createWhatsAppJourneyActivities } from './whatsapp/whatsapp-journeys';
import { createOrderNotificationActivities } from './commerce/order-notifications';
import { createCrmDeliveryActivities } from './crm/crm-deliveries';
import { createCrmImportActivities } from './crm/crm-import';

export type { ActivityDependencies } from './dependencies';

/**
 * Every activity of the main worker written as a named function over its dependencies, by the name Temporal registers
 * it under (committed histories name them: never rename one).
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
};

/**
 * Every activity of the main worker, bound to its dependencies. The worker wires in the real ones; tests
 * pass their own. The export job's activities are not here: the export worker runs them on a task queue
 * of its own (activities/exports/exports.ts, worker/export-worker.ts); nor are the recording analyses', which the
 * speech workers run (worker/create-speech-worker.ts).
 */
export function createActivities(dependencies: ActivityDependencies) {
  return {
    ...bindActivities(dependencies, mainWorkerActivities),
    ...createResultWebhookActivities(dependencies),
    ...createJourneyActivities(dependencies),
    ...createWhatsAppMessageActivities(dependencies),
    ...createWhatsAppLeadActivities(dependencies),
    ...createWhatsAppJourneyActivities(dependencies),
    ...createOrderNotificationActivities(dependencies),
    ...createCrmDeliveryActivities(dependencies),
    ...createCrmImportActivities(dependencies),
  };
}

export type Activities = ReturnType<typeof createActivities>;
