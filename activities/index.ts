import type { Client } from '@temporalio/client';
import type { Database } from '../lib/database';
import type { Telephony } from './providers/telephony';
import type { WhatsAppSender } from './providers/whatsapp';
import { createJourneyActivities } from './journeys';
import { createEnrollmentActivities } from './enrollment';
import { createCallActivities } from './calls';
import { createCampaignActivities } from './campaigns';
import { createResultWebhookActivities } from './result-webhooks';
import { createExportActivities } from './exports';

export interface ActivityDependencies {
  db: Database;
  calls: Telephony;
  whatsapp: WhatsAppSender;
  /** To signal other workflows (a campaign wakes its leads). */
  temporal: Client;
  /** Where export jobs write their files (EXPORT_DIR); export activities fail without it. */
  exportDir?: string;
}

/** Every activity, bound to its dependencies. The worker wires in the real ones; tests pass their own. */
export function createActivities(dependencies: ActivityDependencies) {
  return {
    ...createCallActivities(dependencies),
    ...createCampaignActivities(dependencies),
    ...createResultWebhookActivities(dependencies),
    ...createJourneyActivities(dependencies),
    ...createEnrollmentActivities(dependencies),
    ...createExportActivities(dependencies),
  };
}

export type Activities = ReturnType<typeof createActivities>;
