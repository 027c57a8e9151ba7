import type { Client } from '@temporalio/client';
import type { Prisma } from '../../generated/prisma/client';
import { connectCarrier } from '../../lib/carrier-connections/connections';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import type { Database } from '../../lib/database';
import type { DialLadder } from '../../lib/dial-ladder/dial-ladder';
import { addMember, createWorkspace } from '../../lib/door/workspace-admin';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import type { Keyring } from '../../lib/secrets/keyring';
import { insertAgent } from '../support/agents';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { startLadder, storeLead } from './lead-ladder-scenario';

/*
 * The lean ladder (leadLadderWorkflow) on the Twilio path (docs/features/carriers/twilio.md): a lead of a campaign
 * whose caller number is bound to a twilio-twin connection, dialed through the official SDK on the Twilio twin, its
 * callbacks and the script walk's TwiML requests answered by the API's Twilio routes (scripts/record-histories.ts runs
 * the twin and those routes in process).
 */

export interface ScenarioContext {
  db: Database;
  client: Client;
  taskQueue: string;
  /** The Twilio twin's base URL and the key ring the recording worker and routes open connections with. */
  twilio?: { twinUrl: string; keyring: Keyring };
}

export interface ReplayScenario {
  name: string;
  /** relay: the recording API holds the scenario's calls over ConversationRelay (test/replay/scenarios.ts). */
  conversationEngine?: 'relay';
  run(context: ScenarioContext): Promise<string>;
}

const QUESTIONS = ['Which colour would you like?', 'How many pairs would you like?'];

/** What a Twilio scenario's campaign is made of: its caller number, its agent's columns, its ladder. */
export interface TwilioCampaignOptions {
  caller: string;
  agent: Partial<Prisma.AgentUncheckedCreateInput>;
  dialLadder: DialLadder;
}

/**
 * A running campaign of a new workspace connected to the Twilio twin: its caller number bound to the connection, its
 * agent and ladder as given, always open.
 */
export async function twilioCampaign(
  db: Database,
  twilio: NonNullable<ScenarioContext['twilio']>,
  name: string,
  { caller, agent: columns, dialLadder }: TwilioCampaignOptions,
) {
  const { id: workspaceId } = await createWorkspace(db, `Replay ${name}`, {});
  await addMember(db, workspaceId, `${name}@replay.localhost`, 'owner');
  const connection = await connectCarrier(db, twilio.keyring, {
    workspaceId,
    provider: 'twilio-twin',
    baseUrl: twilio.twinUrl,
    account: {
      family: 'twilio',
      accountSid: TWILIO_TWIN_ACCOUNT_SID,
      secrets: { authToken: TWILIO_TWIN_AUTH_TOKEN },
    },
  });
  await assignPhoneNumber(db, workspaceId, caller, undefined, connection.id);
  const agent = await insertAgent(db, workspaceId, { name, ...columns });
  const campaign = await db.campaign.create({
    data: {
      workspaceId,
      name,
      acceptsLeadPush: true,
      status: 'RUNNING',
      dialLadder,
      callingWindow: ALWAYS_OPEN,
      callerNumbers: [caller],
      agentId: agent.id,
    },
  });
  return { campaign, connection };
}

function twilioScenario(
  name: string,
  {
    caller,
    phone,
    voicemailMessage,
    outcome,
  }: { caller: string; phone: string; voicemailMessage: string | null; outcome: string },
  recorded: (db: Database, callId: string) => Promise<boolean>,
): ReplayScenario {
  return {
    name,
    async run({ db, client, taskQueue, twilio }) {
      if (!twilio) throw new Error(`${name} runs on the Twilio twin (scripts/record-histories.ts)`);
      const { campaign, connection } = await twilioCampaign(db, twilio, name, {
        caller,
        agent: {
          script: {
            openingLine: 'Hello, this is the shoe shop.',
            questions: QUESTIONS,
            closing: 'Thank you, goodbye.',
          },
          voicemailMessage,
        },
        dialLadder: SINGLE_ATTEMPT,
      });
      const lead = await storeLead(db, campaign, name, phone);
      const handle = await startLadder({ db, client, taskQueue }, lead);
      const result = await handle.result();
      // What is recorded must be the path it is named for.
      const call = await db.call.findFirstOrThrow({ where: { leadId: lead.id } });
      if (result.outcome !== outcome || call.carrierConnectionId !== connection.id || !(await recorded(db, call.id)))
        throw new Error(`${name}: not the path to record (${JSON.stringify(result)}, call ${call.id})`);
      return handle.workflowId;
    },
  };
}

export const twilioScenarios: ReplayScenario[] = [
  // A person answers: the agent's script walk, two questions asked with speech Gathers and answered.
  twilioScenario(
    'lead-ladder-twilio-script-walk',
    { caller: '+14155580001', phone: '+14155550170', voicemailMessage: null, outcome: 'answered' },
    async (db, callId) => (await db.callTurn.count({ where: { callId, speaker: 'lead' } })) === QUESTIONS.length,
  ),
  // An answering machine: detection redirects the call to the voicemail step at the beep, the message is left.
  twilioScenario(
    'lead-ladder-twilio-voicemail-left',
    {
      caller: '+14155580002',
      phone: '+14155550177',
      voicemailMessage: 'Hi, this is the shoe shop: please call us back.',
      outcome: 'voicemail_left',
    },
    async (db, callId) => (await db.call.findUniqueOrThrow({ where: { id: callId } })).voicemailLeftAt !== null,
  ),
];
