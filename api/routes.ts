import type { RouteDefinition } from '../http/route';
import { agentRoutes } from './agents';
import { backgroundAudioRoutes } from './background-audio';
import { callRoutes } from './calls';
import { callTranslationRoutes } from './call-translations';
import { callIntelligenceRoutes } from './call-intelligence';
import { campaignRoutes } from './campaigns';
import { campaignDataRoutes } from './campaign-data';
import { campaignChatRoutes } from './campaign-chat';
import { commerceOrderRoutes } from './commerce-orders';
import { creditRoutes } from './credits';
import { crmRoutes } from './crm';
import { dictionaryRoutes } from './dictionaries';
import { doNotCallRoutes } from './do-not-call';
import { docsRoutes } from './docs';
import { exportRoutes } from './exports';
import { sheetRoutes } from './sheets';
import { healthRoutes } from './health';
import { leadRoutes } from './leads';
import { journeyRoutes } from './journeys';
import { knowledgeBaseRoutes } from './knowledge-bases';
import { openApiRoutes } from './openapi';
import { refusedToKeysRoutes } from './refused-to-keys';
import { resultRoutes } from './results';
import { resultWebhookRoutes } from './result-webhooks';
import { speechCallRoutes } from './speech-calls';
import { speechPeopleRoutes } from './speech-people';
import { phoneNumberRoutes } from './phone-numbers';
import { voiceRoutes } from './voices';
import { telephonyEventRoutes } from './telephony-events';
import { whatsAppWebhookRoutes } from './whatsapp-webhook';
import { testCallRoutes } from './test-calls';
import { whoamiRoutes } from './whoami';
import { whatsAppSenderRoutes } from './whatsapp-senders';
import { whatsAppTemplateRoutes } from './whatsapp-templates';
import { whatsAppInboxRoutes } from './whatsapp-inbox';
import { whatsAppSendRoutes } from './whatsapp-send';
import { whatsAppCampaignRoutes } from './whatsapp-campaigns';
import { orderNotificationRoutes } from './order-notifications';
import { campaignCrmImportRoutes } from './campaign-crm-import';

/** Every route of the service. Each one declares its access rule next to its definition. */
export const routes: readonly RouteDefinition[] = [
  ...healthRoutes,
  ...telephonyEventRoutes,
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
  ...testCallRoutes,
  ...callTranslationRoutes,
  ...callIntelligenceRoutes,
  ...doNotCallRoutes,
  ...resultWebhookRoutes,
  ...journeyRoutes,
  ...voiceRoutes,
  ...agentRoutes,
  ...backgroundAudioRoutes,
  ...phoneNumberRoutes,
  ...dictionaryRoutes,
  ...knowledgeBaseRoutes,
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
