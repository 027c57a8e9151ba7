import type { Client } from '@temporalio/client';
import { CRM_DELIVERY_SWEEP_AGE_MS, stalledCrmDeliveryIds, trimCrmDeliveries } from '../lib/crm/deliveries';
import { startCrmDeliveryWorkflow } from '../lib/temporal/crm';
import type { Database } from '../lib/database';
import { startPeriodicSweep } from './periodic-sweep';

/**
 * Starts the workflows of the deliveries still `received` older than `ageMs`; answers how many it started (or found
 * started).
 */
export async function startStalledCrmDeliveries(
  db: Database,
  temporal: Client,
  taskQueue: string,
  ageMs = CRM_DELIVERY_SWEEP_AGE_MS,
): Promise<number> {
  const stalled = await stalledCrmDeliveryIds(db, ageMs);
  for (const id of stalled) await startCrmDeliveryWorkflow(temporal, taskQueue, id, 10_000);
  return stalled.length;
}

/** How often each worker looks for store deliveries whose processing never started. */
export const CRM_DELIVERY_SWEEP_EVERY_MS = 15_000;

/**
 * The periodic caller of startStalledCrmDeliveries (docs/features/commerce.md#connections-and-the-stores-webhooks): at
 * start and every CRM_DELIVERY_SWEEP_EVERY_MS, each worker starts the processing of the deliveries still `received`
 * CRM_DELIVERY_SWEEP_AGE_MS after they arrived (Temporal was unreachable when the receiver stored them). Several
 * workers sweeping at once is safe (a delivery's workflow id is its own).
 */
export function startCrmDeliverySweep(
  db: Database,
  temporal: Client,
  taskQueue: string,
  options: { everyMs?: number; ageMs?: number } = {},
): () => void {
  const { everyMs = CRM_DELIVERY_SWEEP_EVERY_MS, ageMs = CRM_DELIVERY_SWEEP_AGE_MS } = options;
  return startPeriodicSweep('crm-delivery-sweep', everyMs, async () => {
    const started = await startStalledCrmDeliveries(db, temporal, taskQueue, ageMs);
    const trimmed = await trimCrmDeliveries(db);
    const done = [
      started > 0 && `processing started for ${started} waiting deliveries`,
      trimmed > 0 && `${trimmed} old deliveries deleted`,
    ].filter(Boolean);
    return done.length ? done.join('; ') : null;
  });
}
