// Call recordings on Twilio (docs/features/recordings.md), on the real servers through the Twilio twin: off by default,
// on (the disclosure announces it, the twin records, GET /calls/{id}/recording streams audio sox decodes), the signed
// recording callback (forged ones refused), retention deleting it at the twin, and another workspace kept out.
import { randomUUID } from 'node:crypto';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import { twilioCallbackUrl } from '../../lib/carriers/twilio/twilio-urls';
import { openCarrierConnection } from '../../lib/carrier-connections/connections';
import { createApiKey } from '../../lib/door/workspace-admin';
import { deleteExpiredRecordings } from '../../lib/recordings/recording-retention';
import { RECORDING_NOTICES } from '../../lib/recordings/recording-notice';
import { prismaSql } from '../../lib/run-sql';
import { checkedFetch } from '../support/api';
import { insertShoeShopAgent, startedAgentCampaign } from '../support/carrier-calls';
import { inboundCalls } from '../support/inbound-calls';
import { useTestDatabase } from '../support/database';
import { callRecordings, soxInfo } from '../support/recordings';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { startedLeadWorkflow } from '../support/lead-workflows';
import { useTemporalClient } from '../support/temporal';
import { twinLog } from '../support/twilio-twin';
import { connectTwinCaller, startTwilioTwinStack } from '../support/twilio-twin-stack';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';
import { transitionCampaign } from '../support/campaign-transition';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
// The deployment's default engine (ConversationRelay); the first agent keeps the Gather walk, whose TwiML is read here.
const { keyring, twin, api } = await startTwilioTwinStack({ db, url, temporal });

const owner = await createTestWorkspace(db, {
  scopes: ['campaigns.edit', 'campaigns.view', 'calls.view', 'phone_numbers.edit'],
});
// The owner's key issued without scopes: every /v1 endpoint, PUT /v1/compliance included.
const { key: fullKey } = await createApiKey(db, owner.memberId);
const caller = '+14155579201';
const connection = await connectTwinCaller(db, keyring, twin.baseUrl, owner.workspaceId, caller);
const stranger = await createTestWorkspace(db, { scopes: ['calls.view'] });

const DISCLOSURE = 'This call is handled by an AI assistant.';
const QUESTIONS = ['Which colour would you like?', 'Which size do you wear?'];
const agent = await db.agent.create({
  data: {
    workspaceId: owner.workspaceId,
    name: 'Shoes',
    language: 'en-US',
    voiceId: 'espeak-ng/en-us',
    script: { openingLine: 'Hello {{name}}, this is the shoe shop.', questions: QUESTIONS, closing: 'Goodbye.' },
    conversationEngine: 'gather',
  },
});
const campaign = await db.campaign.create({
  data: {
    workspaceId: owner.workspaceId,
    name: 'Recordings',
    acceptsLeadPush: true,
    dialLadder: SINGLE_ATTEMPT,
    callingWindow: ALWAYS_OPEN,
    callerNumbers: [caller],
    agentId: agent.id,
  },
});
await transitionCampaign(api, owner.key, campaign.id, 'start');

/** A lead of `campaignId` called to its end (answered: the number's last digit 1), and its call. */
async function calledLead(phone: string, campaignId = campaign.id) {
  const idempotencyKey = randomUUID();
  const pushed = await api.request('POST', `/v1/campaigns/${campaignId}/leads`, {
    key: owner.key,
    body: { lead: { phone, name: 'Ana' }, idempotencyKey },
  });
  expect(pushed.status).toBe(202);
  const { leadId } = (await pushed.json()) as { leadId: string };
  await (await startedLeadWorkflow(temporal.client, campaignId, idempotencyKey)).result();
  return db.call.findFirstOrThrow({ where: { leadId } });
}

const twinRecordingsOf = (callSid: string) =>
  db.sql<{ sid: string }>(`SELECT sid FROM twilio_twin.recordings WHERE "callSid" = $1`, callSid);

const { recordingOf, callDetail, expectAudible } = callRecordings(api, owner);

describe('call recordings on Twilio', () => {
  it('are off by default: nothing is recorded at the twin, the call has no recording and the disclosure is as set', async () => {
    const settings = await api.request('GET', '/v1/compliance', { key: owner.key });
    expect(await settings.json()).toMatchObject({ recording: { enabled: false, retentionDays: null } });
    // A body of before recordings existed (no `recording`) stays valid, and leaves recording off.
    const put = await api.request('PUT', '/v1/compliance', {
      key: fullKey,
      body: {
        disclosure: DISCLOSURE,
        redaction: { cardNumbers: false, emailAddresses: false, usSocialSecurityNumbers: false, ibans: false },
      },
    });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ recording: { enabled: false, retentionDays: null } });

    const call = await calledLead('+14155579211');
    expect(call.outcome).toBe('answered');
    expect(await twinRecordingsOf(call.providerCallId!)).toEqual([]);
    expect((await callDetail(call.id)).recording).toBeNull();
    const refused = await recordingOf(call.id);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toMatchObject({ error: 'call_has_no_recording' });
    const says = (await twinLog(twin.baseUrl, call.providerCallId!)).log.filter((entry) => entry.kind === 'say');
    expect(says[0]?.text).toBe(DISCLOSURE);
  });

  it('on: the disclosure announces it, the twin records the call, GET streams real audio; retention deletes it at the twin too', async () => {
    const put = await api.request('PUT', '/v1/compliance', {
      key: fullKey,
      body: {
        disclosure: DISCLOSURE,
        redaction: { cardNumbers: false, emailAddresses: false, usSocialSecurityNumbers: false, ibans: false },
        recording: { enabled: true, retentionDays: 30 },
      },
    });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ disclosure: DISCLOSURE, recording: { enabled: true, retentionDays: 30 } });

    const call = await calledLead('+14155579221');
    expect(call.outcome).toBe('answered');
    const announced = `${DISCLOSURE} ${RECORDING_NOTICES.en}`;
    // Said first on the line, and stored as the first agent turn.
    const says = (await twinLog(twin.baseUrl, call.providerCallId!)).log.filter((entry) => entry.kind === 'say');
    expect(says[0]?.text).toBe(announced);
    const [firstTurn] = await db.callTurn.findMany({
      where: { callId: call.id },
      orderBy: [{ step: 'asc' }, { part: 'asc' }],
      take: 1,
    });
    expect(firstTurn?.text).toBe(announced);

    // The twin recorded the call; its signed callback told the product the recording is complete.
    const [recorded] = await twinRecordingsOf(call.providerCallId!);
    expect(recorded?.sid).toMatch(/^RE[0-9a-f]{32}$/);
    const detail = await until(
      () => callDetail(call.id),
      (seen) => seen.recording?.status === 'completed',
    ).catch(() => {
      throw new Error("the recording's completed callback never reached the product");
    });
    expect(detail.recording).toMatchObject({ channels: 2, deletedAt: null });
    expect(detail.recording!.durationSec).toBeGreaterThan(2);

    // Streamed from the twin with the connection's credentials: a WAV sox decodes, two channels, seconds long, not silent.
    await expectAudible(call.id, TWILIO_TWIN_AUTH_TOKEN);

    // Another workspace's key cannot read it (the same 403 as an unknown call).
    const foreign = await recordingOf(call.id, stranger);
    expect(foreign.status).toBe(403);

    // Retention: not yet at 29 days, deleted at 31, at the twin too; the call keeps the mark and GET says so.
    const sql = prismaSql(db);
    const open = (id: string) => openCarrierConnection(db, keyring, id);
    const day = 86_400_000;
    expect(await deleteExpiredRecordings(sql, open, { now: new Date(Date.now() + 29 * day) })).toEqual({
      deleted: 0,
      deletedHereOnly: 0,
      failed: 0,
    });
    expect(await deleteExpiredRecordings(sql, open, { now: new Date(Date.now() + 31 * day) })).toEqual({
      deleted: 1,
      deletedHereOnly: 0,
      failed: 0,
    });
    expect(await twinRecordingsOf(call.providerCallId!)).toEqual([]);
    const atTwin = await fetch(
      `${twin.baseUrl}/2010-04-01/Accounts/${TWILIO_TWIN_ACCOUNT_SID}/Recordings/${recorded!.sid}.json`,
      {
        headers: {
          authorization: `Basic ${Buffer.from(`${TWILIO_TWIN_ACCOUNT_SID}:${TWILIO_TWIN_AUTH_TOKEN}`).toString('base64')}`,
        },
      },
    );
    expect(atTwin.status).toBe(404);
    const gone = await recordingOf(call.id);
    expect(gone.status).toBe(410);
    expect(await gone.json()).toMatchObject({ error: 'recording_deleted', deletedAt: expect.any(String) });
    expect((await callDetail(call.id)).recording).toMatchObject({ status: 'deleted', deletedAt: expect.any(String) });
    // Swept again: nothing left to delete.
    expect((await deleteExpiredRecordings(sql, open, { now: new Date(Date.now() + 31 * day) })).deleted).toBe(0);
  });

  it('records a conversation on ConversationRelay too: the welcome greeting says the notice, the recording holds the talk', async () => {
    // Recording is on (the test before). An agent on the deployment's engine: the conversation runs on the relay socket.
    const relayAgent = await insertShoeShopAgent(db, owner.workspaceId, { questions: QUESTIONS });
    const relayCampaign = await startedAgentCampaign(db, api, owner, {
      name: 'Relay recordings',
      caller,
      agentId: relayAgent.id,
    });
    const call = await calledLead('+14155579231', relayCampaign.id);
    expect(call.outcome).toBe('answered');
    expect(call.relaySocketAt).not.toBeNull();
    const log = (await twinLog(twin.baseUrl, call.providerCallId!)).log;
    expect(log.find((entry) => entry.kind === 'say')?.text).toContain(`${DISCLOSURE} ${RECORDING_NOTICES.en}`);
    expect(log.some((entry) => entry.kind === 'connect')).toBe(true);
    const detail = await until(
      () => callDetail(call.id),
      (seen) => seen.recording?.status === 'completed',
    ).catch(() => {
      throw new Error("the relay call's recording never completed");
    });
    expect(detail.recording!.durationSec).toBeGreaterThan(2);
    const heard = await recordingOf(call.id);
    expect(heard.status).toBe(200);
    const info = soxInfo(new Uint8Array(await heard.arrayBuffer()));
    expect(info).toMatchObject({ channels: 2 });
    expect(info.seconds).toBeGreaterThan(2);
    expect(info.maximum).toBeGreaterThan(0.05);
  });

  it("records an inbound call too, answered by the number's agent", async () => {
    const { ownedByTheAccount, routeTo, personCalls, endedCallOf } = inboundCalls({
      db,
      api,
      twinBaseUrl: twin.baseUrl,
      key: owner.key,
    });
    await ownedByTheAccount(caller);
    expect(await routeTo(caller, agent.id)).toMatchObject({ inboundReady: true });
    const call = await endedCallOf(await personCalls('+14155579241', caller));
    expect(call).toMatchObject({ direction: 'inbound', outcome: 'answered' });
    const says = (await twinLog(twin.baseUrl, call.providerCallId!)).log.filter((entry) => entry.kind === 'say');
    expect(says[0]?.text).toBe(`${DISCLOSURE} ${RECORDING_NOTICES.en}`);
    await until(
      () => callDetail(call.id),
      (seen) => seen.recording?.status === 'completed',
    ).catch(() => {
      throw new Error("the inbound call's recording never completed");
    });
    const heard = await recordingOf(call.id);
    expect(heard.status).toBe(200);
    expect(soxInfo(new Uint8Array(await heard.arrayBuffer())).seconds).toBeGreaterThan(2);
  });

  it('refuses a forged recording callback: unsigned, or signed with another auth token; nothing changes', async () => {
    const call = await db.call.findFirstOrThrow({
      where: { workspaceId: owner.workspaceId, recording: { status: 'deleted' } },
      include: { recording: true },
    });
    const callbackUrl = twilioCallbackUrl(api.baseUrl, 'recording', {
      connectionId: connection.id,
      attemptId: call.attemptId,
    });
    const form = {
      AccountSid: TWILIO_TWIN_ACCOUNT_SID,
      CallSid: call.providerCallId!,
      RecordingSid: `RE${'ab'.repeat(16)}`,
      RecordingStatus: 'completed',
      RecordingDuration: '600',
      RecordingChannels: '1',
    };
    const post = (signature: string | null) =>
      checkedFetch(callbackUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(signature !== null && { 'x-twilio-signature': signature }),
        },
        body: new URLSearchParams(form).toString(),
      });
    for (const signature of [
      null,
      'bm90IGEgc2lnbmF0dXJl',
      twilio.getExpectedTwilioSignature('f'.repeat(32), callbackUrl, form),
    ]) {
      const refused = await post(signature);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ error: 'invalid_signature' });
    }
    const after = await db.callRecording.findUniqueOrThrow({ where: { callId: call.id } });
    expect(after).toEqual(call.recording);
    // Signed by the account, the same callback is taken, and changes nothing on a recording already settled.
    const signed = await post(twilio.getExpectedTwilioSignature(TWILIO_TWIN_AUTH_TOKEN, callbackUrl, form));
    expect(signed.status).toBe(200);
    expect(await signed.json()).toEqual({ received: true, applied: false });
    expect(await db.callRecording.findUniqueOrThrow({ where: { callId: call.id } })).toEqual(call.recording);
  });
});
