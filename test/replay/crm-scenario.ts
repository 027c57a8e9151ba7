import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../generated/prisma/client';
import { replaceOrderNotificationRules } from '../../api/commerce/order-notifications';
import { connectCrm } from '../../lib/crm/connections';
import { startCrmDeliveryWorkflow } from '../../lib/temporal/crm';
import { payloadShape } from '../../lib/crm/payload-shape';
import { shopifyOrderPayload } from '../../simulators/shopify-twin/shopify-orders';
import { crmDeliveryWorkflowId, orderNotificationWorkflowId } from '../../lib/temporal/workflow-ids';
import type { orderNotificationWorkflow } from '../../workflows/commerce/order-notification';
import { messagingWorkspace, type WhatsAppScenarioContext } from './whatsapp-scenario';
import { TEST_KEYRING } from '../support/keyring';

/**
 * A connected store with one order-notification rule, and an orders/create delivery stored as the receiver
 * stores it, processed by its workflow: the order applied, the rule's notification started (when enabled),
 * the delivery finished.
 */
async function deliveredOrder(
  context: WhatsAppScenarioContext,
  e164: string,
  seq: number,
  settings: { enabled: boolean; delayMinutes: number },
) {
  const { db, client, taskQueue } = context;
  const { services, principal, workspaceId, templateId } = await messagingWorkspace(context, e164);
  const { id: connectionId } = await connectCrm(db, TEST_KEYRING, {
    workspaceId,
    kind: 'shopify',
    shopDomain: `replay-${randomUUID().slice(0, 8)}.myshopify.com`,
    secret: 'shpss_replay',
  });
  const {
    rules: [rule],
  } = await replaceOrderNotificationRules(services, principal, connectionId, [
    { templateId, presetId: 'order_basic', ...settings },
  ]);
  const payload = shopifyOrderPayload({ seq, phone: '+14155557131' }); // the simulated provider: read
  const delivery = await db.crmWebhookDelivery.create({
    data: {
      connectionId,
      status: 'received',
      topic: 'orders/create',
      eventId: randomUUID(),
      shape: payloadShape(payload) as Prisma.InputJsonValue,
      payload: payload as Prisma.InputJsonValue,
    },
  });
  await startCrmDeliveryWorkflow(client, taskQueue, delivery.id);
  const deliveryWorkflowId = crmDeliveryWorkflowId(delivery.id);
  await client.workflow.getHandle(deliveryWorkflowId).result();
  const order = await db.commerceOrder.findFirstOrThrow({ where: { connectionId } });
  return { deliveryWorkflowId, ruleId: rule!.id, orderId: order.id };
}

/** A store's orders/create webhook processed: the order applied, its notification started, the delivery processed. */
export const crmDeliveryScenario = {
  name: 'crm-delivery-order-created',
  async run(context: WhatsAppScenarioContext): Promise<string> {
    const { deliveryWorkflowId, ruleId, orderId } = await deliveredOrder(context, '+14155557004', 31, {
      enabled: true,
      delayMinutes: 0,
    });
    await context.client.workflow.getHandle(orderNotificationWorkflowId(ruleId, orderId)).result();
    return deliveryWorkflowId;
  },
};

/** The rule's notification of a new order: its delay, the checks, the message handed over by its child workflow. */
export const orderNotificationScenario = {
  name: 'order-notification-handed-over',
  async run(context: WhatsAppScenarioContext): Promise<string> {
    const { ruleId, orderId } = await deliveredOrder(context, '+14155557005', 32, {
      enabled: true,
      delayMinutes: 0,
    });
    const workflowId = orderNotificationWorkflowId(ruleId, orderId);
    await context.client.workflow.getHandle(workflowId).result();
    return workflowId;
  },
};

/** A notification whose order was cancelled before its delay ended: it sleeps, then sends nothing. */
export const cancelledOrderNotificationScenario = {
  name: 'order-notification-order-cancelled',
  async run(context: WhatsAppScenarioContext): Promise<string> {
    const { db, client, taskQueue } = context;
    // The rule disabled while the order arrives, so that nothing is started before the order is cancelled;
    // its delay (a minute of 50 ms while recording) is a durable timer in the history.
    const { ruleId, orderId } = await deliveredOrder(context, '+14155557006', 33, { enabled: false, delayMinutes: 1 });
    await db.commerceOrder.update({ where: { id: orderId }, data: { cancelledAt: new Date() } });
    await db.orderNotificationRule.update({ where: { id: ruleId }, data: { enabled: true } });
    const workflowId = orderNotificationWorkflowId(ruleId, orderId);
    const handle = await client.workflow.start<typeof orderNotificationWorkflow>('orderNotificationWorkflow', {
      workflowId,
      taskQueue,
      args: [{ ruleId, orderId }],
    });
    const result = await handle.result();
    if (result.status !== 'skipped' || result.reason !== 'order_cancelled')
      throw new Error(`expected the cancelled order to be skipped, got ${JSON.stringify(result)}`);
    return workflowId;
  },
};
