// Inbound calls on Twilio (docs/features/carriers/inbound.md), end to end on the real servers: the API, a worker,
// Temporal and PostgreSQL, and the Twilio twin as the carrier. Setting a number's inbound agent points the number at the
// product through the official SDK (IncomingPhoneNumbers, checked against Twilio's description); the twin then places
// calls to it on request, from an unknown number and from a lead whose ladder is waiting for its next rung.
import { describe, expect, it } from 'vitest';
import { TWILIO_TWIN_ACCOUNT_SID } from '../../lib/carriers/twin';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { insertShoeShopAgent, SHOE_SHOP_CLOSING } from '../support/carrier-calls';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { conformingAnswer, twilioTwinRecord } from '../support/twilio-twin';
import { connectTwinCaller, startTwilioTwinStack } from '../support/twilio-twin-stack';
import { until } from '../support/until';
import { agentLines, inboundCalls, leadWaitingForItsSecondRung } from '../support/inbound-calls';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const { keyring, twin, api } = await startTwilioTwinStack({ db, url, temporal });
const twinRecord = twilioTwinRecord(db);

const owner = await createTestWorkspace(db, {
  scopes: ['campaigns.edit', 'campaigns.view', 'agents.edit', 'phone_numbers.edit', 'calls.view'],
});
const number = '+14155569101';
const connection = await connectTwinCaller(db, keyring, twin.baseUrl, owner.workspaceId, number);
const agent = await insertShoeShopAgent(db, owner.workspaceId, { questions: ['What colour would you like?'] });

const { ownedByTheAccount, numberView, routeTo, personCalls, endedCallOf } = inboundCalls({
  db,
  api,
  twinBaseUrl: twin.baseUrl,
  key: owner.key,
});

describe('pointing a number at the product', () => {
  it('setting the inbound agent updates the number at Twilio through the SDK; inboundReady only once Twilio confirms', async () => {
    await ownedByTheAccount(number);
    expect((await numberView(number)).inboundReady).toBe(false);
    const routed = await routeTo(number, agent.id);
    expect(routed).toMatchObject({ inboundAgentId: agent.id, inboundReady: true });

    const [atTwilio] = await twin.client.incomingPhoneNumbers.list({ phoneNumber: number });
    expect(atTwilio).toMatchObject({
      voiceUrl: `${api.baseUrl}/telephony/twilio/${connection.id}/inbound/voice`,
      voiceMethod: 'POST',
      statusCallback: `${api.baseUrl}/telephony/twilio/${connection.id}/inbound/status`,
      statusCallbackMethod: 'POST',
    });
    // The twin's answers are Twilio's, as its description publishes them.
    const listed = await conformingAnswer(
      twin.baseUrl,
      { method: 'get', path: '/2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers.json' },
      {
        method: 'GET',
        path: `/2010-04-01/Accounts/${TWILIO_TWIN_ACCOUNT_SID}/IncomingPhoneNumbers.json?PhoneNumber=${encodeURIComponent(number)}`,
      },
    );
    expect(listed.status).toBe(200);
    await conformingAnswer(
      twin.baseUrl,
      { method: 'post', path: '/2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers/{Sid}.json' },
      {
        method: 'POST',
        path: `/2010-04-01/Accounts/${TWILIO_TWIN_ACCOUNT_SID}/IncomingPhoneNumbers/${atTwilio!.sid}.json`,
        body: new URLSearchParams({ FriendlyName: 'Shoe shop' }).toString(),
      },
    );
  });

  it('a number the Twilio account does not hold is routed but not ready; one bound to no carrier neither', async () => {
    const notHeld = '+14155569102';
    await assignPhoneNumber(db, owner.workspaceId, notHeld, undefined, connection.id);
    expect(await routeTo(notHeld, agent.id)).toMatchObject({ inboundAgentId: agent.id, inboundReady: false });
    const unbound = '+14155569103';
    await assignPhoneNumber(db, owner.workspaceId, unbound);
    expect(await routeTo(unbound, agent.id)).toMatchObject({ inboundAgentId: agent.id, inboundReady: false });
    // Held later (bought at Twilio): routing it again points it.
    await ownedByTheAccount(notHeld);
    expect(await routeTo(notHeld, agent.id)).toMatchObject({ inboundReady: true });
  });
});

describe('inbound calls', () => {
  it('an unknown caller gets the agent without lead context, listed as an inbound call with its transcript and intelligence', async () => {
    await ownedByTheAccount(number);
    await routeTo(number, agent.id);
    const stranger = '+14155561234';
    const sid = await personCalls(stranger, number);
    const call = await endedCallOf(sid);
    expect(call).toMatchObject({
      kind: 'inbound',
      direction: 'inbound',
      leadId: null,
      campaignId: null,
      agentId: agent.id,
      outcome: 'answered',
      fromNumber: stranger,
      toNumber: number,
      provider: 'twilio-twin',
    });
    const said = agentLines(call.transcript);
    expect(said[0]).not.toContain('Ana');
    expect(said).toContain('What colour would you like?');
    expect(said.at(-1)).toBe(SHOE_SHOP_CLOSING);
    // The twin's record agrees: it asked the product and heard the agent.
    const atTwin = await twinRecord.call(sid);
    expect(atTwin.status).toBe('completed');

    const listed = await api.request('GET', '/calls', { key: owner.key });
    const { items } = (await listed.json()) as { items: Record<string, unknown>[] };
    expect(items.find((item) => item.id === call.id)).toMatchObject({
      kind: 'inbound',
      direction: 'inbound',
      phone: stranger,
      outcome: 'answered',
      evaluationScore: expect.any(Number),
    });
    const detail = await api.request('GET', `/calls/${call.id}`, { key: owner.key });
    expect(await detail.json()).toMatchObject({ direction: 'inbound', transcript: expect.any(Array) });
  });

  it('a lead returning a missed call mid-ladder is reached by it: the call is on the lead, the ladder dials no more', async () => {
    await ownedByTheAccount(number);
    await routeTo(number, agent.id);
    // A long second rung: the lead waits for it when it calls back.
    // Last digit 6: the twin's number that does not answer.
    const { campaign, leadId, handle } = await leadWaitingForItsSecondRung(
      { db, api, temporal, owner },
      { number, agentId: agent.id, phone: '+14155562226' },
    );
    const leadPhone = '+14155562226';
    const sid = await personCalls(leadPhone, number);
    const call = await endedCallOf(sid);
    expect(call).toMatchObject({
      kind: 'campaign',
      direction: 'inbound',
      leadId,
      campaignId: campaign.id,
      attempt: 2,
      attemptId: `${leadId}:2`,
      outcome: 'answered',
    });
    // The conversation knew the lead.
    expect(agentLines(call.transcript)[0]).toBe('Hello Ana, this is the shoe shop.');
    // Reached at once, before its ladder wakes.
    expect(await db.lead.findUniqueOrThrow({ where: { id: leadId } })).toMatchObject({
      status: 'completed',
      waitingFor: null,
    });

    // Its ladder wakes for the second rung, finds that attempt made, and ends: no second dial.
    expect(await handle.result()).toMatchObject({ status: 'completed', outcome: 'answered', attempts: 2 });
    expect(await twinRecord.count(`"to" = $1`, leadPhone)).toBe(1);
    const result = await api.request('GET', `/v1/results/${leadId}`, { key: owner.key });
    expect(await result.json()).toMatchObject({
      status: 'completed',
      outcome: 'answered',
      attempts: 2,
      calls: [
        { attempt: 1, direction: 'outbound', outcome: 'no_answer' },
        { attempt: 2, direction: 'inbound', outcome: 'answered' },
      ],
    });
    // Its line was given back: nothing of the campaign is in flight.
    expect(await db.campaign.findUniqueOrThrow({ where: { id: campaign.id } })).toMatchObject({ callsInFlight: 0 });
  });

  it('a number routed to no agent is not answered: the product hangs up', async () => {
    const spare = '+14155569104';
    await assignPhoneNumber(db, owner.workspaceId, spare, undefined, connection.id);
    await ownedByTheAccount(spare);
    await routeTo(spare, agent.id);
    await routeTo(spare, null);
    const sid = await personCalls('+14155561235', spare);
    const atTwin = await until(
      () => twinRecord.call(sid),
      (row) => row.status === 'completed',
      30_000,
    );
    expect(atTwin.durationSec).toBe(0);
    expect(await db.call.count({ where: { providerCallId: sid } })).toBe(0);
  });
});
