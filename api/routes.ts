import type { RouteDefinition } from './http/route';
import { agentRoutes } from './agents/routes';
import { backgroundAudioRoutes } from './background-audio/routes';
import { callRoutes } from './calls/routes';
import { complianceRoutes } from './compliance/routes';
import { recordingRoutes } from './recordings/routes';
import { callTranslationRoutes } from './translations/routes';
import { callIntelligenceRoutes } from './call-intelligence/routes';
import { campaignRoutes } from './campaigns/routes';
import { campaignDataRoutes } from './campaign-data/routes';
import { campaignChatRoutes } from './chat/routes';
import { commerceOrderRoutes } from './commerce/routes';
import { creditRoutes } from './credits/routes';
import { crmRoutes } from './crm/routes';
import { dictionaryRoutes } from './dictionaries/routes';
import { doNotCallRoutes } from './leads/do-not-call-routes';
import { docsRoutes } from './openapi/docs-routes';
import { exportRoutes } from './exports/routes';
import { sheetRoutes } from './sheets/routes';
import { healthRoutes } from './health/routes';
import { leadRoutes } from './leads/routes';
import { journeyRoutes } from './journeys/routes';
import { knowledgeBaseRoutes } from './knowledge-bases/routes';
import { openApiRoutes } from './openapi/routes';
import { refusedToKeysRoutes } from './refused-to-keys/routes';
import { resultRoutes } from './leads/results-routes';
import { resultWebhookRoutes } from './result-webhooks/routes';
import { functionRoutes } from './functions/routes';
import { calendarRoutes } from './calendar/routes';
import { speechCallRoutes } from './speech/speech-calls-routes';
import { speechPeopleRoutes } from './speech/speech-people-routes';
import { phoneNumberRoutes } from './phone-numbers/routes';
import { voiceRoutes } from './voices/routes';
import { telephonyEventRoutes } from './calls/telephony-events-routes';
import { telnyxRoutes } from './carriers/telnyx-routes';
import { telnyxInboundRoutes } from './carriers/telnyx-inbound';
import { twilioRoutes } from './carriers/twilio-routes';
import { twilioInboundRoutes } from './carriers/twilio-inbound';
import { whatsAppWebhookRoutes } from './whatsapp/webhook-routes';
import { testCallRoutes } from './test-calls/routes';
import { testSessionRoutes } from './test-sessions/routes';
import { whoamiRoutes } from './whoami/routes';
import { whatsAppSenderRoutes } from './whatsapp/senders-routes';
import { whatsAppTemplateRoutes } from './whatsapp/templates-routes';
import { whatsAppInboxRoutes } from './whatsapp/inbox-routes';
import { whatsAppSendRoutes } from './whatsapp/send-routes';
import { whatsAppCampaignRoutes } from './whatsapp/campaigns-routes';
import { orderNotificationRoutes } from './commerce/order-notifications-routes';
import { campaignCrmImportRoutes } from './crm/campaign-crm-import-routes';

/** Every route of the service. Each one declares its access rule next to its definition. */
export const routes: readonly RouteDefinition[] = [
  ...healthRoutes,
  ...telephonyEventRoutes,
  ...twilioRoutes,
  ...twilioInboundRoutes,
  ...telnyxRoutes,
  ...telnyxInboundRoutes,
  ...whatsAppWebhookRoutes,
  ...openApiRoutes(() => routes),
  ...docsRoutes,
  ...whoamiRoutes,
  ...campaignRoutes,
  ...campaignDataRoutes,
  ...exportRoutes,
  ...campaignChatRoutes,
  ...sheetRoutes,
  ...leadRoutes,
  ...resultRoutes,
  ...callRoutes,
  ...recordingRoutes,
  ...testCallRoutes,
  ...testSessionRoutes,
  ...callTranslationRoutes,
  ...callIntelligenceRoutes,
  ...doNotCallRoutes,
  ...resultWebhookRoutes,
  ...functionRoutes,
  ...calendarRoutes,
  ...journeyRoutes,
  ...voiceRoutes,
  ...agentRoutes,
  ...backgroundAudioRoutes,
  ...phoneNumberRoutes,
  ...dictionaryRoutes,
  ...knowledgeBaseRoutes,
  ...complianceRoutes,
  ...speechPeopleRoutes,
  ...speechCallRoutes,
  ...creditRoutes,
  ...whatsAppSenderRoutes,
  ...whatsAppTemplateRoutes,
  ...whatsAppInboxRoutes,
  ...whatsAppSendRoutes,
  ...whatsAppCampaignRoutes,
  ...crmRoutes,
  ...commerceOrderRoutes,
  ...orderNotificationRoutes,
  ...campaignCrmImportRoutes,
  ...refusedToKeysRoutes,
];
