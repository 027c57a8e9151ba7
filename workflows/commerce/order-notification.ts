import { executeChild, proxyActivities, sleep } from '@temporalio/workflow';
import type { OrderNotificationActivities } from '../../activities/commerce/order-notifications';
import type { OrderNotificationInput, OrderNotificationResult } from '../../lib/commerce/order-notification';
import { whatsAppMessageWorkflow } from '../whatsapp/whatsapp-message';
import { untilDatabaseAnswers } from '../../lib/temporal/retry-policies';

/** Short database work, retried (1 s doubling to a minute) until the database answers. */
const { orderNotificationDelay, prepareOrderNotification } = proxyActivities<OrderNotificationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: untilDatabaseAnswers,
});

/**
 * One order notification (docs/features/commerce.md#order-notifications): a rule's WhatsApp message for one order. It
 * waits the rule's delayMinutes on a durable timer (a worker restart or a deploy in between changes
 * nothing), then decides: the rule still there and enabled, the order not cancelled and with a phone, the
 * template still APPROVED (and the other sending rules); then the message is recorded under
 * `order:<ruleId>:<orderId>` with its price held and handed to the provider by its own
 * whatsAppMessageWorkflow (a child), billed by the provider's webhooks. Otherwise it ends saying why.
 */
export async function orderNotificationWorkflow(input: OrderNotificationInput): Promise<OrderNotificationResult> {
  const { delayMs } = await orderNotificationDelay({ ruleId: input.ruleId });
  if (delayMs > 0) await sleep(delayMs);
  const prepared = await prepareOrderNotification(input);
  if ('skipped' in prepared) return { status: 'skipped', reason: prepared.skipped };
  const { messageId, messageWorkflowId } = prepared;
  const sent = await executeChild(whatsAppMessageWorkflow, {
    workflowId: messageWorkflowId,
    args: [{ messageId }],
  });
  return sent.status === 'handed_over'
    ? { status: 'handed_over', messageId }
    : { status: 'failed', messageId, errorCode: sent.status === 'failed' ? sent.errorCode : null };
}
