import type { WorkflowType } from './workflow-contracts';

/**
 * The patch register (docs/patch-register.md): every patched() id of the workflows, with what it changed, the committed
 * histories (test/histories/) that record its marker or take its old branch, how long a run that may take the old
 * branch lives, and when the old branch may go. Workflows ask `patched(PATCHES.<name>.id)`; eslint refuses any other
 * argument, and test/patch-register.test.ts checks the call sites and the history lists against test/histories/.
 * Pure data, shared by every cached workflow run (worker/shared-workflow-modules.ts).
 */
export interface RegisteredPatch {
  /** The marker's id: never changed once released (runs in flight recorded it). */
  readonly id: string;
  /** The workflow type that asks it. */
  readonly workflow: WorkflowType;
  /** The commit that brought it, and its date (UTC): runs started before its release recorded the old branch. */
  readonly since: { readonly commit: string; readonly date: string };
  /** What the new branch does that the old one did not. */
  readonly change: string;
  /**
   * patched: both branches kept. deprecated: deprecatePatch(id), the old branch removed (docs/patch-register.md,
   * "Retiring a patch": the call itself goes in a later release).
   */
  readonly status: 'patched' | 'deprecated';
  /** Committed histories (names without .json) that record its marker. */
  readonly recordedIn: readonly string[];
  /**
   * Committed histories that take its old branch: each fails to replay once the branch is removed (found by
   * `npx tsx scripts/replay-without-patch.ts <id>`). Retiring the patch retires these too.
   */
  readonly oldPathIn: readonly string[];
  /** The workflow's other histories without its marker: recorded without ever reaching the patch point. */
  readonly notReachedIn: readonly string[];
  /** The longest a run that may have taken the old branch lives. */
  readonly longestRun: string;
  /** When deprecatePatch may replace it, the old branch removed. */
  readonly retireWhen: string;
  /** Why it stays (what keeps it, and the count that would retire it), or why it went and what is left to do. */
  readonly decision: string;
}

/** A lead's ladder lives as long as its campaign holds it: see longestRun below. */
const LEAD_DIAL_LIFETIME =
  'unbounded: a lead holds while its campaign is paused or not started (rechecking every 5 minutes, for as long as ' +
  'the campaign stays so: campaigns live for months), and its rungs may wait up to 30 days each (10 rungs)';
/** A journey run waits for operators without a deadline. */
const JOURNEY_RUN_LIFETIME =
  'unbounded: a run waits for an operator (needs_recovery, a review node) without a deadline, a wait node may last ' +
  'a year, and a call node runs a whole dial ladder';
/** How many runs of a workflow started before the release carrying a commit are still open. */
const openBefore = (workflow: string, commit: string) =>
  `temporal workflow count --query "WorkflowType='${workflow}' AND ExecutionStatus='Running' AND StartTime < '<the release carrying ${commit}>'"`;
const stillOpen = (workflow: string, commit: string) =>
  `no ${workflow} started before the release carrying ${commit} is still running (${openBefore(workflow, commit)} answers 0)`;

/**
 * The decision of a patch that stays: the runs that may take its old branch live without bound (`why`), so no date
 * since its release frees it, only its count answering 0 in every deployment; the committed histories on its old
 * branch are retired with it then. `more`: what else stands in the way, or does not.
 */
function kept<const Facts extends Omit<RegisteredPatch, 'decision'>>(
  facts: Facts,
  why: string,
  more?: string,
): Facts & { decision: string } {
  const histories =
    facts.oldPathIn.length === 0
      ? 'No committed history takes its old branch.'
      : `Its old branch is replayed by ${facts.oldPathIn.join(', ')}, retired with it.`;
  return {
    ...facts,
    decision:
      `Keep: ${why}. ${histories} It may go once ${openBefore(facts.workflow, facts.since.commit)} answers 0 in ` +
      `every deployment.${more ? ` ${more}` : ''}`,
  };
}

/**
 * The decision of a retired patch (deprecatePatch, its old branch removed): `why` the runs that may take its old
 * branch are all closed, and the histories retired with it. The deprecatePatch call goes in a later release, once no
 * run started before the one that retired it is open, and once the committed histories that recorded the marker as
 * patched() are recorded again: the SDK refuses a history holding a marker that the code no longer asks, and ignores
 * one recorded by deprecatePatch.
 */
function retired<const Facts extends Omit<RegisteredPatch, 'decision'> & { status: 'deprecated' }>(
  facts: Facts,
  why: string,
): Facts & { decision: string } {
  return {
    ...facts,
    decision:
      `Retired on 2026-12-07 (issue 41): ${why} Next, its deprecatePatch call may go once no ${facts.workflow} ` +
      `started before the release that retired it is open, with ${facts.recordedIn.join(' and ')} recorded again ` +
      `first (${facts.recordedIn.length === 1 ? 'it holds' : 'they hold'} its marker as patched()).`,
  };
}

/** Why a patch of a lead's ladder stays. */
const LEAD_RUNS_UNBOUNDED =
  'lead runs started before it may still be open, holding while their campaign is paused (campaigns live for months)';
/** What else frees a patch of leadDialWorkflow: the type itself goes once none of its runs is open. */
const LEAD_DIAL_TYPE_GOES =
  'No new lead starts leadDialWorkflow (docs/patch-register.md, "Replaced workflow types"): its patches may also go ' +
  "with the type, once no run of it is open at all; the lead-dial histories are shared by its patches' lists, so " +
  'they go in the order the patches came.';
/** Why a patch of a journey run stays. */
const JOURNEY_RUNS_UNBOUNDED =
  'journey runs started before it may still be open, waiting for an operator (needs_recovery, a review node) ' +
  'without a deadline or in a wait node of up to a year';

const SYNC_LEAD_HISTORIES = [
  'lead-dial-answered',
  'lead-dial-busy-full-ladder',
  'lead-dial-do-not-call',
  'lead-dial-invalid-number',
  'lead-dial-paused-then-resumed',
];
const LOCAL_BOOKKEEPING_HISTORIES = [
  'lead-dial-busy-full-ladder-local-bookkeeping',
  'lead-dial-paused-then-resumed-local-bookkeeping',
];
const ASYNC_CARRIER_HISTORIES = [
  'lead-dial-answered-async-carrier',
  'lead-dial-busy-full-ladder-async-carrier',
  'lead-dial-voicemail-async-carrier',
];
const AFTER_CALL_ENDED_HISTORIES = [
  'lead-dial-answered-after-call-ended',
  'lead-dial-failed-after-call-ended',
  'lead-dial-paused-then-resumed-async-carrier',
];
const AFTERMATH_WHEN_NEEDED_HISTORIES = [
  'lead-dial-answered-aftermath-when-needed',
  'lead-dial-busy-full-ladder-aftermath-when-needed',
];
const DIAL_IN_WORKFLOW_TASK_HISTORIES = [
  'lead-dial-answered-dial-in-workflow-task',
  'lead-dial-busy-full-ladder-dial-in-workflow-task',
  // Recorded since, with every patch's marker: the campaign's hold woken by campaignChanged.
  'lead-dial-held-by-campaign-signals',
];

/** Every lead-dial history recorded once local bookkeeping (and the result webhooks before it) had landed. */
const LEAD_DIAL_HISTORIES_SINCE_LOCAL_BOOKKEEPING = [
  ...LOCAL_BOOKKEEPING_HISTORIES,
  ...ASYNC_CARRIER_HISTORIES,
  ...AFTER_CALL_ENDED_HISTORIES,
  ...AFTERMATH_WHEN_NEEDED_HISTORIES,
  ...DIAL_IN_WORKFLOW_TASK_HISTORIES,
];

export const PATCHES = {
  resultWebhooks: kept(
    {
      id: 'result-webhooks',
      workflow: 'leadDialWorkflow',
      since: { commit: 'eb8b355', date: '2026-11-22' },
      change: "A lead finished on its own (not a journey's call node) enqueues its lead.finished result webhooks.",
      status: 'patched',
      recordedIn: LEAD_DIAL_HISTORIES_SINCE_LOCAL_BOOKKEEPING,
      oldPathIn: SYNC_LEAD_HISTORIES,
      notReachedIn: [],
      longestRun: LEAD_DIAL_LIFETIME,
      retireWhen: stillOpen('leadDialWorkflow', 'eb8b355'),
    },
    LEAD_RUNS_UNBOUNDED,
    LEAD_DIAL_TYPE_GOES,
  ),
  localBookkeeping: kept(
    {
      id: 'local-bookkeeping',
      workflow: 'leadDialWorkflow',
      since: { commit: '39205fd', date: '2026-11-22' },
      change:
        "The lead's bookkeeping (plan, calling slot, campaign status, finish, result events) runs as local activities.",
      status: 'patched',
      recordedIn: LEAD_DIAL_HISTORIES_SINCE_LOCAL_BOOKKEEPING,
      oldPathIn: SYNC_LEAD_HISTORIES,
      notReachedIn: [],
      longestRun: LEAD_DIAL_LIFETIME,
      retireWhen: stillOpen('leadDialWorkflow', '39205fd'),
    },
    LEAD_RUNS_UNBOUNDED,
    LEAD_DIAL_TYPE_GOES,
  ),
  asyncCarrier: kept(
    {
      id: 'async-carrier',
      workflow: 'leadDialWorkflow',
      since: { commit: 'bd58866', date: '2026-11-23' },
      change:
        "Each attempt dials (dialCall answers at once) and waits for the call's end as durable state (callEnded " +
        'signal, or reconcileCall past the deadline), instead of one synchronous placeCall. Asked at every attempt.',
      status: 'patched',
      recordedIn: [
        ...ASYNC_CARRIER_HISTORIES,
        ...AFTER_CALL_ENDED_HISTORIES,
        ...AFTERMATH_WHEN_NEEDED_HISTORIES,
        ...DIAL_IN_WORKFLOW_TASK_HISTORIES,
      ],
      oldPathIn: [...SYNC_LEAD_HISTORIES, ...LOCAL_BOOKKEEPING_HISTORIES],
      notReachedIn: [],
      longestRun: LEAD_DIAL_LIFETIME,
      retireWhen: stillOpen('leadDialWorkflow', 'bd58866'),
    },
    LEAD_RUNS_UNBOUNDED,
    LEAD_DIAL_TYPE_GOES,
  ),
  afterCallEnded: kept(
    {
      id: 'after-call-ended',
      workflow: 'leadDialWorkflow',
      since: { commit: '8bf8328', date: '2026-11-23' },
      change:
        "After a call with an id ends, the lead runs afterCallEnded (the call's intelligence, the carrier breaker).",
      status: 'patched',
      recordedIn: [
        ...AFTER_CALL_ENDED_HISTORIES,
        ...AFTERMATH_WHEN_NEEDED_HISTORIES,
        ...DIAL_IN_WORKFLOW_TASK_HISTORIES,
      ],
      // The do-not-call lead never gets a call id, so it never asks.
      oldPathIn: [
        'lead-dial-answered',
        'lead-dial-busy-full-ladder',
        'lead-dial-invalid-number',
        'lead-dial-paused-then-resumed',
        ...LOCAL_BOOKKEEPING_HISTORIES,
        ...ASYNC_CARRIER_HISTORIES,
      ],
      notReachedIn: ['lead-dial-do-not-call'],
      longestRun: LEAD_DIAL_LIFETIME,
      retireWhen: stillOpen('leadDialWorkflow', '8bf8328'),
    },
    LEAD_RUNS_UNBOUNDED,
    LEAD_DIAL_TYPE_GOES,
  ),
  aftermathWhenNeeded: kept(
    {
      id: 'aftermath-when-needed',
      workflow: 'leadDialWorkflow',
      since: { commit: '3897697', date: '2026-11-23' },
      change:
        'Only a call that has an aftermath (answered, voicemail, failed) runs afterCallEnded, as a local activity; ' +
        'before, every call ran it as an activity task. Asked inside after-call-ended.',
      status: 'patched',
      recordedIn: [...AFTERMATH_WHEN_NEEDED_HISTORIES, ...DIAL_IN_WORKFLOW_TASK_HISTORIES],
      oldPathIn: AFTER_CALL_ENDED_HISTORIES,
      // Recorded before after-call-ended: it is asked only inside that patch's branch.
      notReachedIn: [...SYNC_LEAD_HISTORIES, ...LOCAL_BOOKKEEPING_HISTORIES, ...ASYNC_CARRIER_HISTORIES],
      longestRun: LEAD_DIAL_LIFETIME,
      retireWhen: stillOpen('leadDialWorkflow', '3897697'),
    },
    LEAD_RUNS_UNBOUNDED,
    LEAD_DIAL_TYPE_GOES,
  ),
  dialInWorkflowTask: kept(
    {
      id: 'dial-in-workflow-task',
      workflow: 'leadDialWorkflow',
      since: { commit: 'b51ea9f', date: '2026-11-23' },
      change:
        'The dial (dialCall) runs as a local activity, one marker instead of an activity task. Asked per attempt.',
      status: 'patched',
      recordedIn: DIAL_IN_WORKFLOW_TASK_HISTORIES,
      oldPathIn: [...ASYNC_CARRIER_HISTORIES, ...AFTER_CALL_ENDED_HISTORIES, ...AFTERMATH_WHEN_NEEDED_HISTORIES],
      // On the synchronous path (before async-carrier) there is no dialCall to ask about.
      notReachedIn: [...SYNC_LEAD_HISTORIES, ...LOCAL_BOOKKEEPING_HISTORIES],
      longestRun: LEAD_DIAL_LIFETIME,
      retireWhen: stillOpen('leadDialWorkflow', 'b51ea9f'),
    },
    LEAD_RUNS_UNBOUNDED,
    LEAD_DIAL_TYPE_GOES,
  ),
  journeyNodeSearchAttribute: kept(
    {
      id: 'journey-node-search-attribute',
      workflow: 'journeyRunWorkflow',
      since: { commit: 'e1e6e5e', date: '2026-11-22' },
      change: 'The run upserts the JourneyNodeId search attribute at every node.',
      status: 'patched',
      recordedIn: [
        'journey-whatsapp-node-channel',
        'journey-call-branch-webhook-wait-lean-ladder',
        'journey-call-branch-webhook-wait-ladder-v2',
      ],
      oldPathIn: [
        'journey-call-branch-webhook-wait',
        'journey-recovered-by-signal',
        'journey-review-decided-by-update',
      ],
      notReachedIn: [],
      longestRun: JOURNEY_RUN_LIFETIME,
      retireWhen: stillOpen('journeyRunWorkflow', 'e1e6e5e'),
    },
    JOURNEY_RUNS_UNBOUNDED,
  ),
  callNodeAgent: kept(
    {
      id: 'call-node-agent',
      workflow: 'journeyRunWorkflow',
      since: { commit: '5e47d1c', date: '2026-11-23' },
      change:
        'A call node naming its own agent passes it to the child dial ladder (asked only when the node names one).',
      status: 'patched',
      recordedIn: [],
      oldPathIn: [],
      // No committed history has a call node that names an agent: replay covers neither branch.
      notReachedIn: [
        'journey-call-branch-webhook-wait',
        'journey-call-branch-webhook-wait-lean-ladder',
        'journey-call-branch-webhook-wait-ladder-v2',
        'journey-recovered-by-signal',
        'journey-review-decided-by-update',
        'journey-whatsapp-node-channel',
      ],
      longestRun: JOURNEY_RUN_LIFETIME,
      retireWhen: stillOpen('journeyRunWorkflow', '5e47d1c'),
    },
    JOURNEY_RUNS_UNBOUNDED,
    'No committed history covers its new branch either: a history of a call node naming an agent would.',
  ),
  journeyJsonBody: kept(
    {
      id: 'journey-json-body',
      workflow: 'journeyRunWorkflow',
      since: { commit: '48bd1d6', date: '2026-12-07' },
      change:
        "A webhook node's JSON body (lib/journeys/render-json.ts isJsonBody) renders each value as JSON: escaped inside " +
        'a JSON string, as a JSON value elsewhere, so that lead data cannot add keys (asked only for a JSON body).',
      status: 'patched',
      // Recorded since, with call-node-ladder-v2: its webhook node's body is JSON.
      recordedIn: ['journey-call-branch-webhook-wait-ladder-v2'],
      oldPathIn: [],
      // The new branch changes only the body an activity is given, never a command: no committed history takes it
      // apart, and those recorded before it never asked it.
      notReachedIn: [
        'journey-call-branch-webhook-wait',
        'journey-call-branch-webhook-wait-lean-ladder',
        'journey-recovered-by-signal',
        'journey-review-decided-by-update',
        'journey-whatsapp-node-channel',
      ],
      longestRun: JOURNEY_RUN_LIFETIME,
      retireWhen: stillOpen('journeyRunWorkflow', '48bd1d6'),
    },
    JOURNEY_RUNS_UNBOUNDED,
    'The two histories recorded before it with a JSON body replay either branch (a body is not a command replay compares).',
  ),
  whatsappNodeProvider: kept(
    {
      id: 'whatsapp-node-provider',
      workflow: 'journeyRunWorkflow',
      since: { commit: '5c3ec43', date: '2026-11-25' },
      change:
        'A whatsapp node sends on the WhatsApp channel (sendJourneyWhatsApp: its provider, billing and statuses) ' +
        'instead of the embedded sender (sendWhatsAppTemplate).',
      status: 'patched',
      recordedIn: [
        'journey-whatsapp-node-channel',
        'journey-call-branch-webhook-wait-lean-ladder',
        'journey-call-branch-webhook-wait-ladder-v2',
      ],
      oldPathIn: ['journey-call-branch-webhook-wait'],
      notReachedIn: ['journey-recovered-by-signal', 'journey-review-decided-by-update'],
      longestRun: JOURNEY_RUN_LIFETIME,
      retireWhen: stillOpen('journeyRunWorkflow', '5c3ec43'),
    },
    JOURNEY_RUNS_UNBOUNDED,
  ),
  testCallBilling: retired(
    {
      id: 'test-call-billing',
      workflow: 'testCallWorkflow',
      since: { commit: 'c80846b', date: '2026-11-25' },
      change:
        'The call is billed (billTestCall: the hold posted or voided) before its intelligence, and a call that ' +
        'fails for good has its hold voided; before, billTestCall was a no-op run after afterCallEnded.',
      status: 'deprecated',
      recordedIn: ['test-call-billed-answered', 'test-call-billed-busy'],
      // test-call-answered, recorded before it, took the old branch: retired with it.
      oldPathIn: [],
      notReachedIn: [],
      longestRun:
        "about 36 minutes (the call's deadline, 32 minutes, and 3 rechecks a minute apart), plus its activities' " +
        'retries (callSteps: about 17 minutes each at worst): under 2 hours',
      retireWhen: stillOpen('testCallWorkflow', 'c80846b'),
    },
    'a test call lives under 2 hours and c80846b came on 2026-11-25, so its count answers 0 in every deployment ' +
      'that has run that release for 2 hours; a test call answers no query, so a closed one is never replayed. ' +
      'test-call-answered, the one history of the unbilled branch, was retired with it.',
  ),
  callNodeLeanLadder: kept(
    {
      id: 'call-node-lean-ladder',
      workflow: 'journeyRunWorkflow',
      since: { commit: '9d6d50d', date: '2026-11-27' },
      change:
        "A call node's child is the lean ladder (leadLadderWorkflow: its dials wait in the campaign's line queue, woken " +
        'when a line is handed to them) instead of leadDialWorkflow (which polls for a free line).',
      status: 'patched',
      recordedIn: ['journey-call-branch-webhook-wait-lean-ladder'],
      oldPathIn: ['journey-call-branch-webhook-wait'],
      notReachedIn: [
        'journey-recovered-by-signal',
        'journey-review-decided-by-update',
        'journey-whatsapp-node-channel',
        // Asked only when call-node-ladder-v2 answers false: a run that records that marker never asks this one.
        'journey-call-branch-webhook-wait-ladder-v2',
      ],
      longestRun: JOURNEY_RUN_LIFETIME,
      retireWhen: stillOpen('journeyRunWorkflow', '9d6d50d'),
    },
    JOURNEY_RUNS_UNBOUNDED,
  ),
  callNodeLadderV2: kept(
    {
      id: 'call-node-ladder-v2',
      workflow: 'journeyRunWorkflow',
      since: { commit: '669c2bd', date: '2026-12-07' },
      change:
        "A call node's child is the current ladder (leadLadderWorkflowV2) instead of the lean ladder (leadLadderWorkflow): " +
        'the same commands for a call node (attemptCall ignores settleAtEnd with a callKey, its calls never settle the ' +
        'lead), so that no new run starts leadLadderWorkflow. Asked before call-node-lean-ladder: a new run records ' +
        'this marker alone.',
      status: 'patched',
      recordedIn: ['journey-call-branch-webhook-wait-ladder-v2'],
      oldPathIn: ['journey-call-branch-webhook-wait', 'journey-call-branch-webhook-wait-lean-ladder'],
      notReachedIn: [
        'journey-recovered-by-signal',
        'journey-review-decided-by-update',
        'journey-whatsapp-node-channel',
      ],
      longestRun: JOURNEY_RUN_LIFETIME,
      retireWhen: stillOpen('journeyRunWorkflow', '669c2bd'),
    },
    JOURNEY_RUNS_UNBOUNDED,
  ),
  campaignAnswerBeforeWaking: kept(
    {
      id: 'campaign-answer-before-waking',
      workflow: 'campaignWorkflow',
      since: { commit: '19f4bc2', date: '2026-11-27' },
      change:
        'A transition answers its Update once its status is committed (setCampaignStatus); the leads are woken ' +
        '(notifyCampaignLeads) after the answer, before the next transition starts and before the run ends. Before, ' +
        'the Update answered only after every lead was woken, which for a campaign with many leads outlasted the ' +
        "API's deadline (a 503 while the transition went on).",
      status: 'patched',
      recordedIn: ['campaign-start-pause-resume-stop-answer-first'],
      // Recorded on the old branch, yet it replays without it (scripts/replay-without-patch.ts finds none): when an
      // Update answers is a protocol message, not a command that replay compares. The patch keeps a run caught
      // between its wake-up and its answer by a deploy on the branch it started.
      oldPathIn: [],
      notReachedIn: ['campaign-start-pause-resume-stop'],
      longestRun:
        'a run continues as new after 2,000 history events, and a paused campaign may wait months for its next ' +
        'transition: without bound',
      retireWhen: stillOpen('campaignWorkflow', '19f4bc2'),
    },
    'a campaign run started before it may wait for its next transition without bound (a paused campaign waits ' +
      'for months; only its continue-as-new, after 2,000 events, starts a run that has never taken the old branch)',
  ),
  whatsappHandOverOnce: retired(
    {
      id: 'whatsapp-hand-over-once',
      workflow: 'whatsAppMessageWorkflow',
      since: { commit: 'e49fada', date: '2026-11-28' },
      change:
        'A send whose answer was lost (ambiguous: timeout, reset, a 5xx without a message id) is not retried: the run ' +
        'waits WHATSAPP_RESEND_AFTER_SECONDS, then resolveAmbiguousSend (sent when its status came, one resend when a ' +
        'later message of the number had a status, else unknown).',
      status: 'deprecated',
      recordedIn: ['whatsapp-hand-over-once'],
      oldPathIn: [],
      notReachedIn: ['whatsapp-message-handed-over'],
      longestRun:
        'about a day: a send is retried while the provider is down for about a day (providerForADay: 150 tries, ' +
        '1 s doubling to 10 minutes apart, 30 s each, about 25 hours), and the old branch ended the run at once',
      retireWhen: stillOpen('whatsAppMessageWorkflow', 'e49fada'),
    },
    'a message run lives about a day and e49fada came on 2026-11-28, so its count answers 0 in every deployment ' +
      'that has run that release for a day; a message run answers no query, so a closed one is never replayed. No ' +
      'committed history took the old branch.',
  ),
  leadMessageHandOverOnce: kept(
    {
      id: 'lead-message-hand-over-once',
      workflow: 'leadMessageWorkflow',
      since: { commit: 'e49fada', date: '2026-11-28' },
      change:
        "A lead's send whose answer was lost is not retried: the lead waits for its message's status, at most " +
        'WHATSAPP_RESEND_AFTER_SECONDS, then resolveAmbiguousSend (sent, resent once, or unknown).',
      status: 'patched',
      recordedIn: ['lead-message-hand-over-once'],
      oldPathIn: [],
      notReachedIn: ['lead-message-delivered', 'lead-message-held-by-campaign-signals'],
      longestRun: LEAD_DIAL_LIFETIME,
      retireWhen: stillOpen('leadMessageWorkflow', 'e49fada'),
    },
    LEAD_RUNS_UNBOUNDED,
    'Only a run whose ambiguous answer a worker without the patch handled took the old branch, and it ended within ' +
      'a day (DELIVERY_WAIT_MS); but the count by start time cannot tell it from a lead held since before the ' +
      'release, which takes the new branch when it sends, so the count decides.',
  ),
  optOutEndsWait: kept(
    {
      id: 'opt-out-ends-wait',
      workflow: 'leadLadderWorkflowV2',
      since: { commit: 'c3ad764', date: '2026-12-07' },
      change:
        "numberOptedOut (the lead's number put on the Do-Not-Call list, lib/temporal/do-not-call.ts) ends a wait for the " +
        'next rung or the calling window at once (do_not_call, its result opted_out), and wakes a hold in the line ' +
        'queue to attempt, which reads the list; before, the lead ended only when its attempt came due. Asked in the ' +
        "signal's handler, so only a run told records it (runLeadLadder: leadLadderWorkflow's runs take it too).",
      status: 'patched',
      recordedIn: ['lead-ladder-v2-opted-out-while-waiting'],
      // Only a run told by numberOptedOut reaches it, and a worker without the handler ignored the signal.
      oldPathIn: [],
      notReachedIn: [
        'lead-ladder-v2-answered',
        'lead-ladder-v2-busy-full-ladder',
        'lead-ladder-v2-busy-settled-at-end',
        'lead-ladder-v2-held-by-campaign-signals',
        'lead-ladder-v2-twilio-callback-at-booked-time',
        'lead-ladder-v2-twilio-opted-out',
        'lead-ladder-v2-twilio-transferred',
      ],
      longestRun: LEAD_DIAL_LIFETIME,
      retireWhen: stillOpen('leadLadderWorkflowV2', 'c3ad764'),
    },
    LEAD_RUNS_UNBOUNDED,
    'Its old branch is only a signal ignored: a run told while a worker without the handler ran it replays that way.',
  ),
} as const satisfies Record<string, RegisteredPatch>;

/** Every registered patch, in the register's order. */
export const REGISTERED_PATCHES: readonly RegisteredPatch[] = Object.values(PATCHES);
