import { ActivityFailure, ApplicationFailure, CancellationScope, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { CrmDeliveryActivities } from '../../activities/crm/crm-deliveries';
import { storeDeliveryApplied, untilDatabaseAnswers } from '../../lib/temporal/retry-policies';
import type { CrmDeliveryInput, CrmDeliveryResult } from '../../lib/crm/crm-delivery';

/**
 * Applying a delivery takes a few statements; a database that is briefly unreachable (or a payload that
 * cannot be applied) is tried 4 times over about 4 s, then the delivery is marked failed.
 */
const { processCrmDelivery } = proxyActivities<CrmDeliveryActivities>({
  startToCloseTimeout: '30 seconds',
  retry: storeDeliveryApplied,
});
const { failCrmDelivery, finishCrmDelivery, scheduleOrderNotifications } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: untilDatabaseAnswers,
});

/** What the delivery's processingError says: the activity's message, without Temporal's wrapping. */
function reasonOf(error: unknown): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message.slice(0, 1000);
  return 'the delivery could not be processed';
}

/**
 * The durable work after a store's webhook was answered
 * (docs/features/commerce.md#connections-and-the-stores-webhooks): an order topic is applied to the workspace's
 * commerce orders, a new order's notifications scheduled, the delivery then processed (its payload dropped); any other
 * topic ignored; a delivery that cannot be applied within its retries failed, with the reason and its payload kept.
 */
export async function crmDeliveryWorkflow({ deliveryId }: CrmDeliveryInput): Promise<CrmDeliveryResult> {
  let outcome: Awaited<ReturnType<typeof processCrmDelivery>>;
  try {
    outcome = await processCrmDelivery({ deliveryId });
  } catch (error) {
    const processingError = reasonOf(error);
    await CancellationScope.nonCancellable(() => failCrmDelivery({ deliveryId, processingError }));
    return { status: 'failed' };
  }
  // A new order starts its order notifications (docs/features/commerce.md#order-notifications) before the delivery is
  // finished, so a worker lost in between schedules them again (each start is idempotent).
  if (outcome.newOrder && outcome.orderId) await scheduleOrderNotifications({ orderId: outcome.orderId });
  if (outcome.status === 'processed' || outcome.status === 'ignored')
    await finishCrmDelivery({ deliveryId, status: outcome.status });
  return { status: outcome.status };
}
