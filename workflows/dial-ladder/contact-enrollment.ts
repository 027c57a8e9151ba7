import { condition, continueAsNew, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { enrollmentNudgeSignal } from '../../lib/temporal/messages';
import { untilDatabaseAnswers } from '../../lib/temporal/retry-policies';
import type { ContactEnrollmentInput, ContactEnrollmentResult } from '../../lib/dial-ladder/contact-enrollment';

const { enrollNextContacts } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: untilDatabaseAnswers,
});

/** How often enrollment looks again while the campaign's fresh leads fill its lines. */
const PACE_MS = 2_000;
/** While the campaign is paused or not started, it looks again this often (or when nudged). */
const HOLD_MS = 60_000;
/** Continue as new well before the history grows large: one loop is a handful of events. */
const STEPS_PER_RUN = 500;

/**
 * Drains a campaign's calling list into leads, paced by the campaign's concurrency cap: each step
 * enrolls what keeps the lines busy, then waits. The start request only starts this workflow; no
 * request waits for one Temporal call per contact.
 */
export async function contactEnrollmentWorkflow({
  campaignId,
}: ContactEnrollmentInput): Promise<ContactEnrollmentResult> {
  let nudged = false;
  setHandler(enrollmentNudgeSignal, () => {
    nudged = true;
  });
  for (let steps = 0; ; steps++) {
    nudged = false;
    const step = await enrollNextContacts({ campaignId });
    if (step.state === 'done') return { remaining: step.remaining };
    if (steps >= STEPS_PER_RUN) return continueAsNew<typeof contactEnrollmentWorkflow>({ campaignId });
    // A full batch may be followed by another at once; otherwise the lines are busy, so wait.
    if (step.enrolled < 1_000) await condition(() => nudged, step.state === 'waiting' ? HOLD_MS : PACE_MS);
  }
}
