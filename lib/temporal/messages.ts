import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { CampaignAction, CampaignStatus } from '../campaigns/campaign-transitions';
import type { CampaignStatusReason } from '../dial-ladder/carrier-breaker';
import type { ExportProgress } from '../exports/export-jobs';
import type { LiveSheetProgress } from '../sheets/progress';
import type { EndedCall } from '../calls/ended-call';
import type { JourneyRunState, RecoveryDecision } from '../journeys/run-state';
import type { LeadState } from '../dial-ladder/lead-state';
import type { LeadMessageState } from '../whatsapp/lead-message-state';

/*
 * Every signal, update and query of the service's workflows, defined once. The workflows set their
 * handlers from these; whatever sends one (the API, activities, tests, scripts) imports it from here,
 * never retypes its name. This module holds nothing else, so a sender loads no workflow code. The
 * names are recorded in workflow histories and typed by operators in the Temporal UI: never rename one.
 */

/** leadLadderWorkflow (and leadDialWorkflow): where the lead stands on its ladder. */
export const leadStateQuery = defineQuery<LeadState>('leadState');
/** leadDialWorkflow: its campaign started, resumed or stopped (sent by the campaign's notifyCampaignLeads). */
export const campaignChangedSignal = defineSignal('campaignChanged');
/**
 * leadDialWorkflow (the ladder, or a journey's call node): a call it placed ended. Sent by the carrier
 * event endpoint on the terminal event (again on every duplicate of it: harmless) and by reconciliation.
 */
export const callEndedSignal = defineSignal<[EndedCall]>('callEnded');
/**
 * leadLadderWorkflow: a line of its campaign was handed to its queued attempt (docs/features/dial-ladder.md#lines-handed-out).
 * Sent by whatever gave the line back (a call's end, a withdrawn dial, a resume, a raised cap), again by the lead
 * dispatcher's sweep while the line stays unused. Also sent with start to a lead queued by its push, which has no workflow before it.
 */
export const lineGrantedSignal = defineSignal('lineGranted');
/**
 * leadLadderWorkflowV2 (and leadLadderWorkflow): the lead's number was put on its workspace's Do-Not-Call list, by any
 * source (lib/temporal/do-not-call.ts): a lead waiting for its next attempt ends at once instead of when it comes due
 * (patch opt-out-ends-wait, docs/features/dial-ladder.md#an-opt-out-ends-the-wait).
 */
export const numberOptedOutSignal = defineSignal('numberOptedOut');

/**
 * campaignWorkflow: start, pause, resume or stop; answered once the new status is committed. The reason
 * is the service's own (the carrier circuit breaker pausing); an operator's or a key's transition has
 * none, and clears the one recorded.
 */
export const campaignTransitionUpdate = defineUpdate<
  { status: CampaignStatus },
  [CampaignAction, CampaignStatusReason?]
>('transition');
/** campaignWorkflow: the campaign's status as the workflow holds it. */
export const campaignStatusQuery = defineQuery<CampaignStatus>('status');

/** contactEnrollmentWorkflow: the campaign started or resumed, so enrollment continues at once. */
export const enrollmentNudgeSignal = defineSignal('enrollmentNudge');

/** journeyRunWorkflow: the run's live state. */
export const journeyRunStateQuery = defineQuery<JourneyRunState>('journeyRunState');
/** journeyRunWorkflow: an operator's decision as an Update: the caller learns at once whether it was taken. */
export const recoverUpdate = defineUpdate<JourneyRunState, [RecoveryDecision]>('recover');
/** journeyRunWorkflow: the same decision as a Signal, for the Temporal Web UI's "Send a Signal". */
export const recoverSignal = defineSignal<[RecoveryDecision]>('recover');

/**
 * leadMessageWorkflow: its message reached a status (sent, delivered, read, failed). Sent by the WhatsApp
 * webhook endpoint after it applied the status (again on a duplicate: harmless).
 */
export const whatsAppMessageStatusSignal =
  defineSignal<[{ messageId: string; status: string }]>('whatsAppMessageStatus');
/** leadMessageWorkflow: where the lead stands. */
export const leadMessageStateQuery = defineQuery<LeadMessageState>('leadMessageState');

/** exportJobWorkflow: rows written as of the last chunk. */
export const exportProgressQuery = defineQuery<ExportProgress>('exportProgress');

/** liveSheetWorkflow: sync now (POST /campaigns/{id}/sheet/sync; PATCH of the schedule, to take it at once). */
export const sheetSyncSignal = defineSignal('sheetSync');
/** liveSheetWorkflow: rewrite the sheet from scratch (POST /campaigns/{id}/sheet/rebuild; PATCH of the columns). */
export const sheetRebuildSignal = defineSignal('sheetRebuild');
/** liveSheetWorkflow: where the workflow stands (the API reads the LiveSheet row; this is for operators). */
export const liveSheetProgressQuery = defineQuery<LiveSheetProgress>('liveSheetProgress');
