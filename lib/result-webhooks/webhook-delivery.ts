/*
 * What webhookDeliveryWorkflow (workflows/result-webhooks/webhook-delivery.ts), one result webhook event's
 * delivery to one endpoint, is started with and answers: types only, so that whoever starts it (lib/temporal/)
 * loads no workflow code.
 */

export interface WebhookDeliveryInput {
  deliveryId: string;
}

export type WebhookDeliveryResult = 'delivered' | 'failed';
