// The conversation's tools (docs/features/conversation/tools.md) used by the script engine on real calls: the API
// (CONVERSATION_ENGINE=relay), a worker, Temporal and PostgreSQL, and the Twilio twin as the carrier, whose personas
// say what makes each tool run.
import { describe, expect, it } from 'vitest';
import { createConnectionCarrier } from '../../lib/carriers/connection-carrier';
import { connectCarrier } from '../../lib/carrier-connections/connections';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import type { Transcript } from '../../lib/calls/transcript';
import type { CallingWindow } from '../../lib/dial-ladder/calling-window';
import type { DialLadder } from '../../lib/dial-ladder/dial-ladder';
import { instantAtLocalTime, localDateTimeOf, addDays } from '../../lib/conversation/zoned-time';
import { leadStateQuery } from '../../lib/temporal/messages';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { startTestApi } from '../support/api';
import { withIntelligence } from '../support/carrier-calls';
import { startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, QUICK_LADDER, SINGLE_ATTEMPT } from '../support/ladders';
import { pushLeadWithWorkflow } from '../support/lead-workflows';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { scriptPersona, startTestTwilioTwin, twinLog } from '../support/twilio-twin';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';
import { transitionCampaign } from '../support/campaign-transition';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const keyring = keyringSchema.parse(newKeyringEntry('k1'));
const twin = await startTestTwilioTwin(db, {
  timeScale: 0.02,
  accounts: [{ sid: TWILIO_TWIN_ACCOUNT_SID, authToken: TWILIO_TWIN_AUTH_TOKEN }],
});
const simulated = await startTestCarrier(db);
const api = await startTestApi({ db, url, temporal, carrierKeyring: keyring, conversationEngine: 'relay' });
await startTestWorker(temporal.taskQueue, {
  db,
  calls: createConnectionCarrier({ db, keyring, fallback: simulated.client, publicBaseUrl: api.baseUrl }),
  statusCallbackBaseUrl: api.baseUrl,
});

const owner = await createTestWorkspace(db, {
  scopes: ['campaigns.edit', 'campaigns.view', 'agents.edit', 'calls.view'],
});
const connection = await connectCarrier(db, keyring, {
  workspaceId: owner.workspaceId,
  provider: 'twilio-twin',
  baseUrl: twin.baseUrl,
  account: { family: 'twilio', accountSid: TWILIO_TWIN_ACCOUNT_SID, secrets: { authToken: TWILIO_TWIN_AUTH_TOKEN } },
});
const caller = '+14155569401';
await assignPhoneNumber(db, owner.workspaceId, caller, undefined, connection.id);

const QUESTIONS = ['What colour would you like for the shoes?', 'How many pairs would you like?'];
const OPENING = 'Hello Ana, this is the shoe shop.';
/** San Francisco: America/Los_Angeles. */
const ZONE = 'America/Los_Angeles';

async function campaignWith(options: {
  transferNumber?: string;
  transferMode?: 'cold' | 'warm';
  ladder?: DialLadder;
  window?: CallingWindow;
}) {
  const agent = await db.agent.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Shoes',
      language: 'en-US',
      voiceId: 'espeak-ng/en-us',
      script: { openingLine: 'Hello {{name}}, this is the shoe shop.', questions: QUESTIONS, closing: 'Goodbye.' },
      transferNumber: options.transferNumber ?? null,
      transferMode: options.transferMode ?? 'cold',
    },
  });
  const campaign = await db.campaign.create({
    data: {
      workspaceId: owner.workspaceId,
      name: 'Tools',
      acceptsLeadPush: true,
      dialLadder: options.ladder ?? SINGLE_ATTEMPT,
      callingWindow: options.window ?? ALWAYS_OPEN,
      callerNumbers: [caller],
      agentId: agent.id,
    },
  });
  await transitionCampaign(api, owner.key, campaign.id, 'start');
  return campaign;
}

/** Ana's lead pushed through the API, with its workflow once it exists. */
async function pushAna(campaignId: string, phone: string) {
  const { leadId, handle } = await pushLeadWithWorkflow(api, owner.key, temporal.client, campaignId, phone, {
    name: 'Ana',
  });
  return { leadId, workflow: handle };
}

async function callAna(campaignId: string, phone: string) {
  const { leadId, workflow } = await pushAna(campaignId, phone);
  const result = await workflow.result();
  const calls = await db.call.findMany({ where: { leadId }, orderBy: { attempt: 'asc' } });
  return { result, calls, leadId };
}

const toolTurns = (transcript: Transcript) => transcript.filter((turn) => turn.speaker === 'tool');

describe('the conversation tools, run by the script engine on a Twilio call', () => {
  it('opt_out: "stop calling me" lists the number at once, the call ends opted_out, and a later push of it is not dialed', async () => {
    const phone = '+14155569411';
    const campaign = await campaignWith({});
    await scriptPersona(twin.baseUrl, { number: phone, answers: ['Please stop calling me.', 'Two.'] });
    const { result, calls, leadId } = await callAna(campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'opted_out', attempts: 1 });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.outcome).toBe('opted_out');
    // Listed by the tool, with its provenance (docs/features/leads.md#the-do-not-call-list).
    expect(
      await db.doNotCall.findUnique({ where: { workspaceId_phone: { workspaceId: owner.workspaceId, phone } } }),
    ).toMatchObject({ source: 'spoken_opt_out', callId: calls[0]!.id, messageId: null });
    expect((await db.lead.findUniqueOrThrow({ where: { id: leadId } })).status).toBe('completed');
    const transcript = (await withIntelligence(db, calls[0]!.id)).transcript as Transcript;
    expect(transcript.map((turn) => `${turn.speaker}: ${turn.text}`)).toEqual([
      `agent: ${OPENING}`,
      `agent: ${QUESTIONS[0]}`,
      'lead: Please stop calling me.',
      'tool: opt_out',
      "agent: I'm sorry to have bothered you. We won't call you again. Goodbye.",
    ]);
    expect(toolTurns(transcript)[0]!.tool).toMatchObject({ name: 'opt_out', arguments: {}, ok: true });

    // The same number pushed again, to another campaign of the workspace: never dialed.
    const other = await campaignWith({});
    const again = await callAna(other.id, phone);
    expect(again.result).toMatchObject({ status: 'cancelled', outcome: 'do_not_call' });
    expect(again.calls).toHaveLength(0);
  });

  it('schedule_callback: "tomorrow at 3 pm" is read in the lead\'s zone, the call ends callback_requested, and the next attempt waits for then', async () => {
    const phone = '+14155569412';
    const campaign = await campaignWith({ ladder: QUICK_LADDER });
    await scriptPersona(twin.baseUrl, { number: phone, answers: ['Call me back tomorrow at 3 pm.'] });
    const { leadId, workflow } = await pushAna(campaign.id, phone);
    const call = await until(
      () => db.call.findFirst({ where: { leadId, status: 'ended' } }),
      (found) => found !== null,
      30_000,
    );
    const expected = instantAtLocalTime(addDays(localDateTimeOf(call!.startedAt, ZONE).date, 1), 15 * 60, ZONE);
    expect(call!.outcome).toBe('callback_requested');
    expect(call!.callbackAt).toEqual(expected);
    // The lead waits for the callback, not for the ladder's next rung (+1 s).
    const lead = await until(
      () => db.lead.findUniqueOrThrow({ where: { id: leadId } }),
      (row) => row.waitingFor === 'rung',
      30_000,
    );
    expect(lead.nextAttemptAt).toEqual(expected);
    const state = await workflow.query(leadStateQuery);
    expect(state).toMatchObject({ phase: 'waiting_for_rung', attempt: 2 });
    expect(Date.parse(state.nextWakeAt!)).toBeGreaterThanOrEqual(expected.getTime() - 5_000);
    expect(await db.call.count({ where: { leadId } })).toBe(1);
    const transcript = (await withIntelligence(db, call!.id)).transcript as Transcript;
    const [tool] = toolTurns(transcript);
    expect(tool!.tool).toMatchObject({
      name: 'schedule_callback',
      arguments: { when: 'Call me back tomorrow at 3 pm.' },
      ok: true,
    });
    expect(transcript.at(-1)!.text).toMatch(/^Of course\. We'll call you back on .*3:00.PM\. Goodbye\.$/);
    await workflow.terminate('the test is over');
  });

  it("schedule_callback outside the calling window: the callback is booked at the window's next opening", async () => {
    const phone = '+14155569413';
    // Open all day, on today's weekday only (in the lead's zone): tomorrow at 3 pm is closed, and the window next opens
    // a week from today at midnight.
    const today = localDateTimeOf(new Date(), ZONE);
    const campaign = await campaignWith({
      ladder: QUICK_LADDER,
      window: { start: '00:00', end: '24:00', days: [today.weekday] },
    });
    await scriptPersona(twin.baseUrl, { number: phone, answers: ['Call me tomorrow at 3 pm.'] });
    const { leadId, workflow } = await pushAna(campaign.id, phone);
    const call = await until(
      () => db.call.findFirst({ where: { leadId, status: 'ended' } }),
      (found) => found !== null,
      30_000,
    );
    expect(call!.outcome).toBe('callback_requested');
    expect(call!.callbackAt).toEqual(instantAtLocalTime(addDays(today.date, 7), 0, ZONE));
    const transcript = (await withIntelligence(db, call!.id)).transcript as Transcript;
    expect(toolTurns(transcript)[0]!.tool!.result).toMatch(/the first time the campaign may call after the time asked/);
    await workflow.terminate('the test is over');
  });

  it('transfer_to_human: a person asked for, the human answers: the call is dialed on to the transfer number and ends transferred', async () => {
    const phone = '+14155569414';
    const transferNumber = '+14155550100';
    const campaign = await campaignWith({ transferNumber });
    await scriptPersona(twin.baseUrl, { number: phone, answers: ['Can I talk to a real person?'] });
    const { result, calls } = await callAna(campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'transferred', attempts: 1 });
    const log = await twinLog(twin.baseUrl, calls[0]!.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === 'dial').map((entry) => entry.text)).toEqual([
      transferNumber,
      `${transferNumber}: completed`,
    ]);
    // Cold: no <Number url>, so the human hears nothing before the lead.
    expect(log.log.filter((entry) => entry.kind === 'whisper')).toEqual([]);
    const transcript = (await withIntelligence(db, calls[0]!.id)).transcript as Transcript;
    expect(toolTurns(transcript)[0]!.tool).toMatchObject({ name: 'transfer_to_human', ok: true });
    expect(transcript.at(-1)!.text).toBe('Of course, let me put you through to a colleague. One moment, please.');
    expect(calls[0]).toMatchObject({ transferMode: 'cold', transferStatus: 'answered' });
  });

  it("warm transfer_to_human, the human answers: their leg hears the summary of the lead's answers (<Number url>), then the lead is bridged", async () => {
    const phone = '+14155569423';
    const transferNumber = '+14155550101';
    const campaign = await campaignWith({ transferNumber, transferMode: 'warm' });
    await scriptPersona(twin.baseUrl, { number: phone, answers: ['Red.', 'Can I talk to a real person?'] });
    const { result, calls } = await callAna(campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'transferred', attempts: 1 });
    const summary = `Ana asked to speak to a person: "Can I talk to a real person?" Answers so far: ${QUESTIONS[0]} Red.`;
    const { log } = await twinLog(twin.baseUrl, calls[0]!.providerCallId!);
    const whisper = log.filter((entry) => entry.kind === 'whisper');
    expect(whisper.map((entry) => entry.text)).toEqual([`Transferred call. ${summary} Connecting you now.`]);
    const bridge = log.find((entry) => entry.kind === 'bridge')!;
    expect(bridge.text).toBe(transferNumber);
    expect(whisper[0]!.atMs).toBeLessThan(bridge.atMs);
    expect(log.filter((entry) => entry.kind === 'dial').map((entry) => entry.text)).toEqual([
      transferNumber,
      `${transferNumber}: completed`,
    ]);
    const view = await api.request('GET', `/calls/${calls[0]!.id}`, { key: owner.key });
    expect(((await view.json()) as { transfer: unknown }).transfer).toMatchObject({
      mode: 'warm',
      status: 'answered',
      summary,
    });
  });

  it('warm transfer_to_human, nobody answers: no summary is said, the lead hears the fallback line, the call ends callback_requested', async () => {
    const phone = '+14155569422';
    const transferNumber = '+14155550116';
    const campaign = await campaignWith({ transferNumber, transferMode: 'warm' });
    await scriptPersona(twin.baseUrl, { number: phone, answers: ['I want to speak to a human.'] });
    const { result, calls } = await callAna(campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'callback_requested', attempts: 1 });
    const { log } = await twinLog(twin.baseUrl, calls[0]!.providerCallId!);
    expect(log.filter((entry) => entry.kind === 'whisper' || entry.kind === 'bridge')).toEqual([]);
    expect(log.filter((entry) => entry.kind === 'dial').map((entry) => entry.text)).toEqual([
      transferNumber,
      `${transferNumber}: no-answer`,
    ]);
    expect(log.filter((entry) => entry.kind === 'say').at(-1)!.text).toBe(
      "I'm sorry, nobody could take your call right now. We'll call you back. Goodbye.",
    );
    expect(calls[0]).toMatchObject({ transferMode: 'warm', transferStatus: 'unanswered' });
  });

  it('transfer_to_human: nobody answers: the lead is told, the call ends callback_requested and the ladder calls again on its next rung', async () => {
    const phone = '+14155569420';
    const transferNumber = '+14155550106';
    const campaign = await campaignWith({ transferNumber, ladder: QUICK_LADDER });
    await scriptPersona(twin.baseUrl, { number: phone, answers: ['I want to speak to a human.'] });
    const { result, calls } = await callAna(campaign.id, phone);
    // Each attempt asks for a person nobody takes: the three rungs, then the ladder ends.
    expect(result).toMatchObject({ status: 'completed', outcome: 'callback_requested', attempts: 3 });
    expect(calls.map((call) => [call.outcome, call.callbackAt])).toEqual([
      ['callback_requested', null],
      ['callback_requested', null],
      ['callback_requested', null],
    ]);
    const log = await twinLog(twin.baseUrl, calls[0]!.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === 'dial').map((entry) => entry.text)).toEqual([
      transferNumber,
      `${transferNumber}: no-answer`,
    ]);
    expect(log.log.filter((entry) => entry.kind === 'say').at(-1)!.text).toBe(
      "I'm sorry, nobody could take your call right now. We'll call you back. Goodbye.",
    );
  });

  it('transfer_to_human without a transfer number: a callback is offered and the script goes on', async () => {
    const phone = '+14155569421';
    const campaign = await campaignWith({});
    await scriptPersona(twin.baseUrl, { number: phone, answers: ['Can I speak to someone?', 'Red.', 'Two.'] });
    const { result, calls } = await callAna(campaign.id, phone);
    expect(result).toMatchObject({ outcome: 'answered' });
    const transcript = (await withIntelligence(db, calls[0]!.id)).transcript as Transcript;
    expect(toolTurns(transcript)[0]!.tool).toMatchObject({ name: 'transfer_to_human', ok: false });
    expect(transcript.filter((turn) => turn.speaker === 'agent').map((turn) => turn.text)).toEqual([
      OPENING,
      QUESTIONS[0],
      "I'm sorry, nobody can take the call right now. Would you like us to call you back later?",
      QUESTIONS[1],
      'Goodbye.',
    ]);
  });
});
