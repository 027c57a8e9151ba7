// Entry point of the workflow bundle: every workflow type the worker registers.
export { leadDialWorkflow } from './dial-ladder/legacy/lead-dial';
export { leadLadderWorkflow } from './dial-ladder/legacy/lead-ladder';
export { leadLadderWorkflowV2 } from './dial-ladder/lead-ladder';
export { campaignWorkflow } from './campaigns/campaign';
export { webhookDeliveryWorkflow } from './result-webhooks/webhook-delivery';
export { journeyRunWorkflow } from './journeys/journey-run';
export { contactEnrollmentWorkflow } from './dial-ladder/contact-enrollment';
export { exportJobWorkflow } from './exports/export-job';
export { callIntelligenceWorkflow } from './call-intelligence/call-intelligence';
export { testCallWorkflow } from './test-calls/test-call';
export { speechAnalysisWorkflow } from './speech/speech-analysis';
export { whatsAppMessageWorkflow } from './whatsapp/whatsapp-message';
export { leadMessageWorkflow } from './whatsapp/lead-message';
export { crmDeliveryWorkflow } from './crm/crm-delivery';
export { crmImportWorkflow } from './crm/crm-import';
export { orderNotificationWorkflow } from './commerce/order-notification';
export { liveSheetWorkflow } from './sheets/live-sheet';
