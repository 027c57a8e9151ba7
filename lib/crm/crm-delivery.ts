/*
 * What crmDeliveryWorkflow (workflows/crm/crm-delivery.ts), the durable processing of one store webhook delivery,
 * is started with and answers: types only, so that whoever starts it (lib/temporal/) loads no workflow code.
 */

export interface CrmDeliveryInput {
  deliveryId: string;
}

export type CrmDeliveryResult = { status: string };
