import type { Client } from '@temporalio/client';
import type { Database } from '../lib/database';
import type { Carrier } from '../lib/calls/carrier';
import type { WhatsAppSender } from '../lib/whatsapp/sender';
import { createJourneyActivities } from './journeys/journeys';
import { createEnrollmentActivities } from './dial-ladder/enrollment';
import { createCallActivities } from './dial-ladder/calls';
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
import type { WhatsAppProvider } from '../lib/whatsapp/provider';
import type { CarrierBreakerRule } from '../lib/dial-ladder/carrier-breaker';
import type { SubscribableProgressState } from '../lib/calls/call-states';

export interface ActivityDependencies {
  db: Database;
  /** The carrier calls are placed through (lib/calls/carrier.ts). */
  calls: Carrier;
  /** The API's address as the carrier reaches it: status events go to <this>/telephony/{provider}/events. */
  statusCallbackBaseUrl: string;
  /** How long a lead waits for its call's terminal event before asking the carrier; default lib/calls/call-deadline.ts. */
  callEndDeadlineMs?: number;
  /** The progress events a dial subscribes to (TELEPHONY_STATUS_CALLBACK_EVENTS); default in-progress only. */
  statusCallbackEvents?: readonly SubscribableProgressState[];
  whatsapp: WhatsAppSender;
  /** The WhatsApp Business provider messages go through (docs/features/whatsapp.md); unset: sending fails. */
  whatsappProvider?: WhatsAppProvider;
  /** To signal other workflows (a campaign wakes its leads). */
  temporal: Client;
  /** How long an order notification's delay minute lasts (activities/commerce/order-notifications.ts); tests only. */
  orderNotificationMinuteMs?: number;
  /** The campaigns' carrier breaker; default lib/dial-ladder/dial-ladder/carrier-breaker.ts (tests may narrow it). */
  carrierBreaker?: CarrierBreakerRule;
}

/**
 * Every activity of the main worker, bound to its dependencies. The worker wires in the real ones; tests
 * pass their own. The export job's activities are not here: the export worker runs them on a task queue
 * of its own (activities/exports/exports/exports.ts, worker/export-worker.ts).
 */
export function createActivities(dependencies: ActivityDependencies) {
  return {
    ...createCallActivities(dependencies),
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
  };
}

export type Activities = ReturnType<typeof createActivities>;
