import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { receiverForADay, untilDatabaseAnswers } from '../../lib/temporal/retry-policies';
import type { WebhookDeliveryInput, WebhookDeliveryResult } from '../../lib/result-webhooks/webhook-delivery';

/**
 * Attempts at 5 s, 10 s, 20 s … doubling up to one an hour, for 26 hours in all: a receiver that is
 * down for a whole day still gets the event. Each attempt has 30 s (the request itself times out at 10 s).
 */
const { deliverWebhook } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '26 hours',
  retry: receiverForADay,
});

const { giveUpWebhook } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: untilDatabaseAnswers,
});

/**
 * Delivers one result webhook event to one endpoint, durably: the retries live in Temporal, so a
 * worker restart neither loses a delivery nor sends it under a new id (every attempt carries the
 * delivery's id as webhook-id). When the retries are spent the delivery is marked failed.
 */
export async function webhookDeliveryWorkflow({ deliveryId }: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  try {
    return (await deliverWebhook({ deliveryId })).status;
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    await giveUpWebhook({ deliveryId, reason: `gave up: ${error.cause?.message ?? error.message}` });
    return 'failed';
  }
}
