import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { transitionTarget, type CampaignAction, type CampaignStatus } from '../../lib/campaigns/campaign-transitions';
import type { CampaignWorkflowInput } from '../../lib/campaigns/campaign-workflow';
import type { CampaignStatusReason } from '../../lib/dial-ladder/carrier-breaker';
import { ErrorCode } from '../../lib/error-codes';
import { campaignStatusQuery, campaignTransitionUpdate } from '../../lib/temporal/messages';
import { campaignTransition } from '../../lib/temporal/retry-policies';
import { PATCHES } from '../../lib/temporal/patches';

const { setCampaignStatus, notifyCampaignLeads } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: campaignTransition,
});

/** Continue-as-new well before the history gets heavy: a campaign lives for months. */
const HISTORY_EVENTS_BEFORE_CONTINUE_AS_NEW = 2_000;

/**
 * The control of one campaign. Start, pause, resume and stop are Updates: the caller learns at once
 * whether the transition was accepted. An accepted transition is committed to PostgreSQL before the
 * Update completes, and lead workflows read that status before every dial attempt, so no attempt
 * starts after a pause has been acknowledged. Leads waiting on the campaign are then woken: since
 * 'campaign-answer-before-waking', after the Update has answered (a stop of a campaign with many leads
 * answers at once, not after every lead was woken), and before the next transition starts.
 */
export async function campaignWorkflow(input: CampaignWorkflowInput): Promise<CampaignStatus> {
  let status = input.status;
  let transitions = Promise.resolve();
  // Transitions accepted and not yet settled, their wake-ups included: the run ends or continues as new only at 0.
  let unsettled = 0;
  // The status the accepted transitions will leave once carried out, which a new one is checked against: a pause
  // asked for by the carrier breaker is committed to PostgreSQL (GET /campaigns/{id} answers PAUSED) before this
  // workflow takes its activity's result, and a resume sent in between was refused as from RUNNING.
  let acceptedStatus = status;
  setHandler(campaignStatusQuery, () => status);
  setHandler(
    campaignTransitionUpdate,
    (action, statusReason) => {
      const answerBeforeWaking = patched(PATCHES.campaignAnswerBeforeWaking.id);
      unsettled++;
      acceptedStatus = transitionTarget(acceptedStatus, action) ?? acceptedStatus;
      const wakeLeads = async (target: CampaignStatus) => {
        if (target !== 'PAUSED') await notifyCampaignLeads({ campaignId: input.campaignId });
      };
      // One transition at a time: each is checked against the status its predecessors left.
      const run = transitions.then(async () => {
        const target = transitionTarget(status, action);
        if (!target) throw invalidTransition(status, action);
        await setCampaignStatus({
          campaignId: input.campaignId,
          status: target,
          ...(statusReason && { statusReason }),
        });
        status = target;
        if (!answerBeforeWaking) await wakeLeads(target);
        return { status };
      });
      const settled = answerBeforeWaking ? run.then(({ status: target }) => wakeLeads(target)) : run;
      // Once none is in flight, the accepted status is the status (also after a transition that failed).
      const done = () => {
        unsettled--;
        if (unsettled === 0) acceptedStatus = status;
      };
      transitions = settled.then(done, done);
      return run;
    },
    {
      validator: (action: CampaignAction, _statusReason?: CampaignStatusReason) => {
        if (!transitionTarget(acceptedStatus, action)) throw invalidTransition(acceptedStatus, action);
      },
    },
  );
  const historyLimit = input.historyLimit ?? HISTORY_EVENTS_BEFORE_CONTINUE_AS_NEW;
  await condition(
    () => status === 'STOPPED' || workflowInfo().historyLength > historyLimit || workflowInfo().continueAsNewSuggested,
  );
  // The leads of the last transition are woken before the run ends or continues as new, and a transition accepted
  // meanwhile is carried out here, not dropped.
  await condition(() => allHandlersFinished() && unsettled === 0);
  if (status === 'STOPPED') return status;
  return continueAsNew<typeof campaignWorkflow>({ ...input, status });
}

function invalidTransition(from: CampaignStatus, action: CampaignAction) {
  return ApplicationFailure.create({
    type: ErrorCode.invalid_campaign_transition,
    message: `cannot ${action} a campaign that is ${from}`,
    nonRetryable: true,
    details: [{ from, action }],
  });
}
