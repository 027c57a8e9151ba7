import type { Database } from '../../lib/database';
import type { DialLadder } from '../../lib/dial-ladder/dial-ladder';
import { leadStateQuery } from '../../lib/temporal/messages';
import { QUICK_LADDER, SINGLE_ATTEMPT } from '../support/ladders';
import { startLadder, storeLead, type LadderType } from './lead-ladder-scenario';
import { twilioCampaign, type ReplayScenario, type ScenarioContext } from './twilio-scenario';

/*
 * The lean ladder after a call the conversation's tools ended (docs/features/conversation/tools.md): a lead of a
 * campaign bound to the Twilio twin, the call held over ConversationRelay (the recording API's CONVERSATION_ENGINE is
 * relay for these scenarios), the script engine running the tool the twin's persona asks for. The outcome comes from
 * the product's own code: the tool marks the call, the statement that ends it gives it the outcome (and the callback's
 * time, Call.callbackAt), and the ladder's rules (afterAttempt, lib/dial-ladder/ladder-rules.ts) decide what follows.
 */

const QUESTIONS = ['Which colour would you like?', 'How many pairs would you like?'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the twin's person at `number` says to the agent's turns, in order, on the calls dialed from now on. */
async function scriptPersona(twinUrl: string, number: string, answers: string[]) {
  const response = await fetch(`${twinUrl}/control/personas`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ number, answers }),
  });
  if (!response.ok) throw new Error(`the twin refused the persona of ${number}: ${response.status}`);
}

interface RelayLead {
  type: LadderType;
  caller: string;
  phone: string;
  dialLadder: DialLadder;
  /** What the person says on the first call. */
  answers: string[];
  transferNumber?: string;
}

/** The persona scripted, the lead stored and its ladder started as the lead dispatcher starts it. */
async function startRelayLead(context: ScenarioContext, name: string, options: RelayLead) {
  const { db, twilio } = context;
  if (!twilio) throw new Error(`${name} runs on the Twilio twin (scripts/record-histories.ts)`);
  await scriptPersona(twilio.twinUrl, options.phone, options.answers);
  const { campaign, connection } = await twilioCampaign(db, twilio, name, {
    caller: options.caller,
    agent: {
      script: { openingLine: 'Hello, this is the shoe shop.', questions: QUESTIONS, closing: 'Thank you, goodbye.' },
      transferNumber: options.transferNumber ?? null,
    },
    dialLadder: options.dialLadder,
  });
  const lead = await storeLead(db, campaign, name, options.phone);
  const handle = await startLadder(context, lead, undefined, options.type);
  return { twinUrl: twilio.twinUrl, connection, lead, handle };
}

/** The calls of the lead, in attempt order, each checked to have been placed through the scenario's connection. */
async function callsOf(db: Database, leadId: string, connectionId: string) {
  const calls = await db.call.findMany({ where: { leadId }, orderBy: { attempt: 'asc' } });
  if (calls.some((call) => call.carrierConnectionId !== connectionId))
    throw new Error(`a call of lead ${leadId} was not placed on the twin`);
  return calls;
}

/**
 * "Call me back in a minute": schedule_callback books a time a minute from the call (read by the callback rules, in
 * the lead's zone; the campaign is always open), the call ends callback_requested with it, and the ladder's next
 * attempt waits for that time on a durable timer, past its one and only rung (a booked callback is honoured once past
 * the last rung). A minute, not "tomorrow at 3 pm", so that the recording reaches the run's end: the second call, where
 * the person answers the agent's two questions, and the ladder ends answered.
 */
const callbackAtBookedTime = (name: string, type: LadderType, caller: string, phone: string): ReplayScenario => ({
  name,
  conversationEngine: 'relay',
  async run(context) {
    const { db } = context;
    const { twinUrl, connection, lead, handle } = await startRelayLead(context, name, {
      type,
      caller,
      phone,
      dialLadder: SINGLE_ATTEMPT,
      answers: ['Call me back in a minute.'],
    });
    while ((await handle.query(leadStateQuery)).phase !== 'waiting_for_rung') await sleep(200);
    // The callback's call: the person answers the questions (a call keeps the persona it was dialed with).
    await scriptPersona(twinUrl, phone, ['Red.', 'Two.']);
    const result = await handle.result();
    const [first, second, ...more] = await callsOf(db, lead.id, connection.id);
    // What is recorded must be the path it is named for: the second call placed at the time booked on the first.
    if (
      first?.outcome !== 'callback_requested' ||
      !first.callbackAt ||
      second?.outcome !== 'answered' ||
      second.startedAt.getTime() < first.callbackAt.getTime() - 1_000 ||
      more.length > 0 ||
      result.status !== 'completed' ||
      result.outcome !== 'answered' ||
      result.attempts !== 2
    )
      throw new Error(`${name}: not the path to record (${JSON.stringify({ result, first, second })})`);
    return handle.workflowId;
  },
});

/**
 * A call a tool ended with an outcome that ends the ladder (opted_out: always; transferred: by default) while rungs are
 * left (the quick ladder has three): one call, the lead completed.
 */
const endedByTool = (
  name: string,
  options: Omit<RelayLead, 'type' | 'dialLadder'> & { outcome: 'opted_out' | 'transferred' },
  recorded: (db: Database, workspaceId: string) => Promise<boolean> = async () => true,
): ReplayScenario => ({
  name,
  conversationEngine: 'relay',
  async run(context) {
    const { db } = context;
    const { connection, lead, handle } = await startRelayLead(context, name, {
      ...options,
      type: 'leadLadderWorkflowV2',
      dialLadder: QUICK_LADDER,
    });
    const result = await handle.result();
    const calls = await callsOf(db, lead.id, connection.id);
    if (
      calls.length !== 1 ||
      calls[0]!.outcome !== options.outcome ||
      result.status !== 'completed' ||
      result.outcome !== options.outcome ||
      !(await recorded(db, lead.workspaceId))
    )
      throw new Error(`${name}: not the path to record (${JSON.stringify({ result, calls })})`);
    return handle.workflowId;
  },
});

export const conversationToolScenarios: ReplayScenario[] = [
  // A callback booked, the next attempt at its time: on the ladder new leads run, and on the first lean ladder (a
  // journey's call node still runs it as its child).
  callbackAtBookedTime(
    'lead-ladder-v2-twilio-callback-at-booked-time',
    'leadLadderWorkflowV2',
    '+14155580003',
    '+14155550171',
  ),
  callbackAtBookedTime(
    'lead-ladder-twilio-callback-at-booked-time',
    'leadLadderWorkflow',
    '+14155580004',
    '+14155550172',
  ),
  // "Please stop calling me": the number listed at once, the ladder ends opted_out.
  endedByTool(
    'lead-ladder-v2-twilio-opted-out',
    { caller: '+14155580005', phone: '+14155550173', answers: ['Please stop calling me.'], outcome: 'opted_out' },
    async (db, workspaceId) => (await db.doNotCall.count({ where: { workspaceId, phone: '+14155550173' } })) === 1,
  ),
  // "Can I talk to a real person?": handed to the agent's transfer number, which answers (last digit 0); ends transferred.
  endedByTool('lead-ladder-v2-twilio-transferred', {
    caller: '+14155580006',
    phone: '+14155550174',
    answers: ['Can I talk to a real person?'],
    transferNumber: '+14155550100',
    outcome: 'transferred',
  }),
];
