import type { ActivityDependencies } from './dependencies';
import { createJourneyActivities } from './journeys/journeys';
import { createEnrollmentActivities } from './dial-ladder/enrollment';
import { createCallActivities } from './dial-ladder/calls';
import { createLeadActivities } from './leads/leads';
import { createCampaignActivities } from './campaigns/campaigns';
import { createResultWebhookActivities } from './result-webhooks/result-webhooks';
import { createCallIntelligenceActivities } from './call-intelligence/call-intelligence';
import { createTestCallActivities } from './test-calls/test-calls';
import { createCallAftermathActivities } from './calls/call-aftermath';
import { createWhatsAppMessageActivities } from './whatsapp/whatsapp-messages';
import { createWhatsAppLeadActivities } from './whatsapp/whatsapp-leads';
import { createWhatsAppJourneyActivities } from './whatsapp/whatsapp-journeys';
import { createOrderNotificationActivities } from './commerce/order-notifications';
import { createCrmDeliveryActivities } from './crm/crm-deliveries';
import { createCrmImportActivities } from './crm/crm-import';

export type { ActivityDependencies } from './dependencies';

/**
 * Every activity of the main worker, bound to its dependencies. The worker wires in the real ones; tests
 * pass their own. The export job's activities are not here: the export worker runs them on a task queue
 * of its own (activities/exports/exports.ts, worker/export-worker.ts).
 */
export function createActivities(dependencies: ActivityDependencies) {
  return {
    ...createCallActivities(dependencies),
    ...createLeadActivities(dependencies),
    ...createCampaignActivities(dependencies),
    ...createResultWebhookActivities(dependencies),
    ...createJourneyActivities(dependencies),
    ...createEnrollmentActivities(dependencies),
    ...createCallIntelligenceActivities(dependencies),
    ...createTestCallActivities(dependencies),
    ...createCallAftermathActivities(dependencies),
    ...createWhatsAppMessageActivities(dependencies),
    ...createWhatsAppLeadActivities(dependencies),
    ...createWhatsAppJourneyActivities(dependencies),
    ...createOrderNotificationActivities(dependencies),
    ...createCrmDeliveryActivities(dependencies),
    ...createCrmImportActivities(dependencies),
  };
}

export type Activities = ReturnType<typeof createActivities>;
