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
  /** patched: both branches kept. deprecated: deprecatePatch(id), the old branch removed. */
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
  /** Why it stays, or why it went. */
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
const stillOpen = (workflow: string, commit: string) =>
  `no ${workflow} started before the release carrying ${commit} is still running ` +
  `(temporal workflow count --query "WorkflowType='${workflow}' AND ExecutionStatus='Running' AND StartTime < '<that release>'" answers 0)`;
const LEAD_DIAL_KEEP =
  'Keep: lead runs started before it may still be open (a paused campaign holds its leads for months), and no ' +
  'count of the open runs in production is at hand here.';
const JOURNEY_KEEP =
  'Keep: journey runs started before it may still be open (a run waiting for an operator has no deadline), and no ' +
  'count of the open runs in production is at hand here.';

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
  resultWebhooks: {
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
    decision: LEAD_DIAL_KEEP,
  },
  localBookkeeping: {
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
    decision: LEAD_DIAL_KEEP,
  },
  asyncCarrier: {
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
    decision: LEAD_DIAL_KEEP,
  },
  afterCallEnded: {
    id: 'after-call-ended',
    workflow: 'leadDialWorkflow',
    since: { commit: '8bf8328', date: '2026-11-23' },
    change:
      "After a call with an id ends, the lead runs afterCallEnded (the call's intelligence, the carrier breaker).",
    status: 'patched',
    recordedIn: [...AFTER_CALL_ENDED_HISTORIES, ...AFTERMATH_WHEN_NEEDED_HISTORIES, ...DIAL_IN_WORKFLOW_TASK_HISTORIES],
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
    decision: LEAD_DIAL_KEEP,
  },
  aftermathWhenNeeded: {
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
    decision: LEAD_DIAL_KEEP,
  },
  dialInWorkflowTask: {
    id: 'dial-in-workflow-task',
    workflow: 'leadDialWorkflow',
    since: { commit: 'b51ea9f', date: '2026-11-23' },
    change: 'The dial (dialCall) runs as a local activity, one marker instead of an activity task. Asked per attempt.',
    status: 'patched',
    recordedIn: DIAL_IN_WORKFLOW_TASK_HISTORIES,
    oldPathIn: [...ASYNC_CARRIER_HISTORIES, ...AFTER_CALL_ENDED_HISTORIES, ...AFTERMATH_WHEN_NEEDED_HISTORIES],
    // On the synchronous path (before async-carrier) there is no dialCall to ask about.
    notReachedIn: [...SYNC_LEAD_HISTORIES, ...LOCAL_BOOKKEEPING_HISTORIES],
    longestRun: LEAD_DIAL_LIFETIME,
    retireWhen: stillOpen('leadDialWorkflow', 'b51ea9f'),
    decision: LEAD_DIAL_KEEP,
  },
  journeyNodeSearchAttribute: {
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
    oldPathIn: ['journey-call-branch-webhook-wait', 'journey-recovered-by-signal', 'journey-review-decided-by-update'],
    notReachedIn: [],
    longestRun: JOURNEY_RUN_LIFETIME,
    retireWhen: stillOpen('journeyRunWorkflow', 'e1e6e5e'),
    decision: JOURNEY_KEEP,
  },
  callNodeAgent: {
    id: 'call-node-agent',
    workflow: 'journeyRunWorkflow',
    since: { commit: '5e47d1c', date: '2026-11-23' },
    change: 'A call node naming its own agent passes it to the child dial ladder (asked only when the node names one).',
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
    decision:
      `${JOURNEY_KEEP} No committed history stands in the way of retiring it, nor covers its new branch: a ` +
      'history of a call node naming an agent would.',
  },
  journeyJsonBody: {
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
    decision:
      `${JOURNEY_KEEP} No committed history stands in the way of retiring it: the two recorded before it with a JSON ` +
      'body replay either branch (a body is not a command replay compares).',
  },
  whatsappNodeProvider: {
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
    decision: JOURNEY_KEEP,
  },
  testCallBilling: {
    id: 'test-call-billing',
    workflow: 'testCallWorkflow',
    since: { commit: 'c80846b', date: '2026-11-25' },
    change:
      'The call is billed (billTestCall: the hold posted or voided) before its intelligence, and a call that ' +
      'fails for good has its hold voided; before, billTestCall was a no-op run after afterCallEnded.',
    status: 'patched',
    recordedIn: ['test-call-billed-answered', 'test-call-billed-busy'],
    oldPathIn: ['test-call-answered'],
    notReachedIn: [],
    longestRun:
      "about 36 minutes (the call's deadline, 32 minutes, and 3 rechecks a minute apart), plus its activities' " +
      'retries (callSteps: about 17 minutes each at worst): under 2 hours',
    retireWhen: stillOpen('testCallWorkflow', 'c80846b'),
    decision:
      'Retirable, not retired yet: a test call lives under 2 hours, so 2 hours after the release carrying c80846b ' +
      'no run that took the old branch is open (test calls answer no query, so closed ones are never replayed). ' +
      'Retiring it (deprecatePatch, the old branch removed) retires test-call-answered, and every committed history ' +
      'must keep replaying until a release whose retireWhen query answered 0 says it may go.',
  },
  callNodeLeanLadder: {
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
    decision: JOURNEY_KEEP,
  },
  callNodeLadderV2: {
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
    notReachedIn: ['journey-recovered-by-signal', 'journey-review-decided-by-update', 'journey-whatsapp-node-channel'],
    longestRun: JOURNEY_RUN_LIFETIME,
    retireWhen: stillOpen('journeyRunWorkflow', '669c2bd'),
    decision: JOURNEY_KEEP,
  },
  campaignAnswerBeforeWaking: {
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
    decision:
      'Keep: a campaign run started before it may wait for its next transition without bound, and no count of the ' +
      'open runs in production is at hand here.',
  },
  whatsappHandOverOnce: {
    id: 'whatsapp-hand-over-once',
    workflow: 'whatsAppMessageWorkflow',
    since: { commit: 'e49fada', date: '2026-11-28' },
    change:
      'A send whose answer was lost (ambiguous: timeout, reset, a 5xx without a message id) is not retried: the run ' +
      'waits WHATSAPP_RESEND_AFTER_SECONDS, then resolveAmbiguousSend (sent when its status came, one resend when a ' +
      'later message of the number had a status, else unknown).',
    status: 'patched',
    recordedIn: ['whatsapp-hand-over-once'],
    oldPathIn: [],
    notReachedIn: ['whatsapp-message-handed-over'],
    longestRun: 'about a day: a send is retried while the provider is down for about a day (providerForADay)',
    retireWhen: stillOpen('whatsAppMessageWorkflow', 'e49fada'),
    decision: 'Keep until the runs of the release before it have ended (a day).',
  },
  leadMessageHandOverOnce: {
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
    decision: 'Keep: lead runs started before it may still be open (a paused campaign holds its leads for months).',
  },
} as const satisfies Record<string, RegisteredPatch>;

/** Every registered patch, in the register's order. */
export const REGISTERED_PATCHES: readonly RegisteredPatch[] = Object.values(PATCHES);
