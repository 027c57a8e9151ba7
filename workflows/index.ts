// Entry point of the workflow bundle: every workflow type the worker registers.
export { leadDialWorkflow } from './lead-dial';
export { campaignWorkflow } from './campaign';
export { webhookDeliveryWorkflow } from './webhook-delivery';
export { journeyRunWorkflow } from './journey-run';
export { contactEnrollmentWorkflow } from './contact-enrollment';
export { exportJobWorkflow } from './export-job';
export { callIntelligenceWorkflow } from './call-intelligence';
export { testCallWorkflow } from './test-call';
export { speechAnalysisWorkflow } from './speech-analysis';
export { whatsAppMessageWorkflow } from './whatsapp-message';
export { leadMessageWorkflow } from './lead-message';
export { crmDeliveryWorkflow } from './crm-delivery';
export { orderNotificationWorkflow } from './order-notification';
export { liveSheetWorkflow } from './live-sheet';
