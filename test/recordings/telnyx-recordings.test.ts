// Call recordings on Telnyx (docs/features/recordings.md#telnyx), on the real servers through the Telnyx twin: off by
// default (no record_start at the twin), on (the disclosure announces it, the twin records, GET /calls/{id}/recording
// streams audio sox decodes), on the script walk, ConversationRelay and an inbound call; a forged call.recording.saved
// refused, retention deleting it at the twin, and another workspace kept out.
import { describe, expect, it } from 'vitest';
import { openCarrierConnection } from '../../lib/carrier-connections/connections';
import { telnyxWebhookUrl } from '../../lib/carriers/telnyx/telnyx-urls';
import { TELNYX_TWIN_API_KEY, TELNYX_TWIN_PRIVATE_KEY } from '../../lib/carriers/twin';
import { createApiKey } from '../../lib/door/workspace-admin';
import { deleteExpiredRecordings } from '../../lib/recordings/recording-retention';
import { RECORDING_NOTICES } from '../../lib/recordings/recording-notice';
import { prismaSql } from '../../lib/run-sql';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { signingKey, telnyxSignatureHeaders } from '../../simulators/telnyx-twin/signature';
import { checkedFetch } from '../support/api';
import { startTestCarrier } from '../support/carrier';
import {
  calledLead,
  connectCallers,
  insertShoeShopAgent,
  startCarrierPath,
  startedAgentCampaign,
  TELNYX_TWIN_ACCOUNT,
} from '../support/carrier-calls';
import { useTestDatabase } from '../support/database';
import { callRecordings } from '../support/recordings';
import { inboundCalls } from '../support/inbound-calls';
import { useTemporalClient } from '../support/temporal';
import { OTHER_ACCOUNT, startTestTelnyxTwin, telnyxTwinLog } from '../support/telnyx-twin';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const keyring = keyringSchema.parse(newKeyringEntry('k1'));
// Twin time: a spoken word 16 ms, a call's talk a second or two.
const twin = await startTestTelnyxTwin(db, { timeScale: 0.04 });
const simulated = await startTestCarrier(db);
// The deployment's default engine (ConversationRelay); the walk's agent asks for the Gather walk.
const { api } = await startCarrierPath(db, {
  url,
  temporal,
  keyring,
  fallback: simulated.client,
  api: { conversationEngine: 'relay' },
});

const owner = await createTestWorkspace(db, {
  scopes: ['campaigns.edit', 'campaigns.view', 'agents.edit', 'calls.view', 'phone_numbers.edit'],
});
// The owner's key issued without scopes: every /v1 endpoint, PUT /v1/compliance included.
const { key: fullKey } = await createApiKey(db, owner.memberId);
const stranger = await createTestWorkspace(db, { scopes: ['calls.view'] });
const caller = '+14155569601';
const connection = await connectCallers(
  db,
  keyring,
  { workspaceId: owner.workspaceId, provider: 'telnyx-twin', baseUrl: twin.baseUrl, account: TELNYX_TWIN_ACCOUNT },
  caller,
);

const DISCLOSURE = 'This call is handled by an AI assistant.';
const QUESTIONS = ['Which colour would you like?', 'How many pairs would you like?'];
const ANNOUNCED = `${DISCLOSURE} ${RECORDING_NOTICES.en}`;
const walkAgent = await insertShoeShopAgent(db, owner.workspaceId, {
  questions: QUESTIONS,
  language: 'en-US',
  conversationEngine: 'gather',
});
const walkCampaign = await startedAgentCampaign(db, api, owner, { name: 'Walk', caller, agentId: walkAgent.id });

const callLead = async (phone: string, campaignId = walkCampaign.id) =>
  (await calledLead(db, { api, temporal }, owner, campaignId, phone)).call;

const recordingApi = callRecordings(api, owner);
const { recordingOf, callDetail } = recordingApi;

const untilCompleted = (callId: string, what: string) =>
  until(
    () => callDetail(callId),
    (seen) => seen.recording?.status === 'completed',
  ).catch(() => {
    throw new Error(`${what}: call.recording.saved never completed the recording`);
  });

const twinLogOf = async (callControlId: string) => (await telnyxTwinLog(twin.baseUrl, callControlId)).log;
const saidOn = async (callControlId: string) =>
  (await twinLogOf(callControlId)).filter((entry) => entry.kind === 'say').map((entry) => entry.text);

const compliance = (recording?: { enabled: boolean; retentionDays: number | null }) =>
  api.request('PUT', '/v1/compliance', {
    key: fullKey,
    body: {
      disclosure: DISCLOSURE,
      redaction: { cardNumbers: false, emailAddresses: false, usSocialSecurityNumbers: false, ibans: false },
      ...(recording && { recording }),
    },
  });

const expectAudible = (callId: string) => recordingApi.expectAudible(callId, TELNYX_TWIN_API_KEY);

describe('call recordings on Telnyx', () => {
  it('are off by default: no record_start at the twin, the call has no recording and the disclosure is as set', async () => {
    expect((await compliance()).status).toBe(200);
    const call = await callLead('+14155569611');
    expect(call.outcome).toBe('answered');
    expect((await twinLogOf(call.providerCallId!)).filter((entry) => entry.kind === 'recording')).toEqual([]);
    expect((await twin.client.recordings.list({ filter: { call_control_id: call.providerCallId! } })).data).toEqual([]);
    expect((await callDetail(call.id)).recording).toBeNull();
    const refused = await recordingOf(call.id);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toMatchObject({ error: 'call_has_no_recording' });
    expect((await saidOn(call.providerCallId!))[0]).toBe(DISCLOSURE);
  });

  it('on: the disclosure announces it, the twin records (wav, dual), GET streams real audio; retention deletes it at the twin too', async () => {
    const put = await compliance({ enabled: true, retentionDays: 30 });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ recording: { enabled: true, retentionDays: 30 } });

    const call = await callLead('+14155569621');
    expect(call.outcome).toBe('answered');
    const log = await twinLogOf(call.providerCallId!);
    // Recorded from before the first line, which says the notice; stored as the first agent turn too.
    const started = log.findIndex((entry) => entry.kind === 'recording');
    expect(log[started]?.text).toBe('started: wav dual');
    expect(log.findIndex((entry) => entry.kind === 'say')).toBeGreaterThan(started);
    expect((await saidOn(call.providerCallId!))[0]).toBe(ANNOUNCED);
    const [firstTurn] = await db.callTurn.findMany({
      where: { callId: call.id },
      orderBy: [{ step: 'asc' }, { part: 'asc' }],
      take: 1,
    });
    expect(firstTurn?.text).toBe(ANNOUNCED);

    // call.recording.saved told the product; the recording found at the twin by the call is the one stored.
    const detail = await untilCompleted(call.id, 'the walk');
    expect(detail.recording).toMatchObject({ channels: 2, deletedAt: null });
    expect(detail.recording!.durationSec).toBeGreaterThan(2);
    const listed = await twin.client.recordings.list({ filter: { call_control_id: call.providerCallId! } });
    expect(listed.data).toHaveLength(1);
    const stored = await db.callRecording.findUniqueOrThrow({ where: { callId: call.id } });
    expect(stored.carrierRecordingId).toBe(listed.data[0]!.id);

    await expectAudible(call.id);
    // Another workspace's key cannot read it (the same 403 as an unknown call).
    expect((await recordingOf(call.id, stranger)).status).toBe(403);

    // Retention: not yet at 29 days, deleted at 31, at the twin too; the call keeps the mark and GET says so.
    const sql = prismaSql(db);
    const open = (id: string) => openCarrierConnection(db, keyring, id);
    const day = 86_400_000;
    expect((await deleteExpiredRecordings(sql, open, { now: new Date(Date.now() + 29 * day) })).deleted).toBe(0);
    const pass = await deleteExpiredRecordings(sql, open, { now: new Date(Date.now() + 31 * day) });
    expect(pass).toMatchObject({ deletedHereOnly: 0, failed: 0 });
    expect(pass.deleted).toBeGreaterThanOrEqual(1);
    await expect(twin.client.recordings.retrieve(stored.carrierRecordingId!)).rejects.toMatchObject({ status: 404 });
    expect((await twin.client.recordings.list({ filter: { call_control_id: call.providerCallId! } })).data).toEqual([]);
    const gone = await recordingOf(call.id);
    expect(gone.status).toBe(410);
    expect(await gone.json()).toMatchObject({ error: 'recording_deleted', deletedAt: expect.any(String) });
    expect((await callDetail(call.id)).recording).toMatchObject({ status: 'deleted', deletedAt: expect.any(String) });
  });

  it('records a conversation on ConversationRelay too: the greeting says the notice, the recording holds the talk', async () => {
    const relayAgent = await insertShoeShopAgent(db, owner.workspaceId, { questions: QUESTIONS, language: 'en-US' });
    const relayCampaign = await startedAgentCampaign(db, api, owner, {
      name: 'Relay recordings',
      caller,
      agentId: relayAgent.id,
    });
    const call = await callLead('+14155569631', relayCampaign.id);
    expect(call.outcome).toBe('answered');
    const log = await twinLogOf(call.providerCallId!);
    expect(log.some((entry) => entry.kind === 'relay')).toBe(true);
    expect(log.findIndex((entry) => entry.kind === 'recording')).toBeLessThan(
      log.findIndex((entry) => entry.kind === 'relay'),
    );
    expect(log.find((entry) => entry.kind === 'say')?.text).toContain(ANNOUNCED);
    expect((await untilCompleted(call.id, 'the relay call')).recording!.durationSec).toBeGreaterThan(2);
    await expectAudible(call.id);
  });

  it("records an inbound call too, answered by the number's agent", async () => {
    const { ownedByTheAccount, routeTo, personCalls, endedCallOf } = inboundCalls({
      db,
      api,
      twinBaseUrl: twin.baseUrl.replace(/\/v2$/, ''),
      key: owner.key,
    });
    await ownedByTheAccount(caller);
    expect(await routeTo(caller, walkAgent.id)).toMatchObject({ inboundReady: true });
    const call = await endedCallOf(await personCalls('+14155569641', caller));
    expect(call).toMatchObject({ direction: 'inbound', outcome: 'answered' });
    expect((await saidOn(call.providerCallId!))[0]).toBe(ANNOUNCED);
    await untilCompleted(call.id, 'the inbound call');
    await expectAudible(call.id);
  });

  it('refuses a forged call.recording.saved: unsigned, or signed by another account; nothing changes', async () => {
    const call = await db.call.findFirstOrThrow({
      where: { workspaceId: owner.workspaceId, recording: { status: 'deleted' } },
      include: { recording: true },
    });
    const webhookUrl = telnyxWebhookUrl(api.baseUrl, { connectionId: connection.id, attemptId: call.attemptId });
    const body = JSON.stringify({
      data: {
        event_type: 'call.recording.saved',
        id: '0ccc7b54-4df3-4bca-a65a-3da1ecc777f0',
        occurred_at: new Date().toISOString(),
        record_type: 'event',
        payload: {
          call_leg_id: '428c31b6-7af4-4bcb-b7f5-5013ef9657c1',
          call_session_id: '428c31b6-7af4-4bcb-b7f5-5013ef9657c1',
          channels: 'single',
          connection_id: '1700000000000000001',
          recording_started_at: new Date().toISOString(),
          recording_ended_at: new Date().toISOString(),
          recording_urls: { wav: 'http://127.0.0.1:9/elsewhere.wav' },
        },
      },
    });
    const post = (headers: Record<string, string>) =>
      checkedFetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    for (const headers of [{}, telnyxSignatureHeaders(signingKey(OTHER_ACCOUNT.signingKey), body)]) {
      const refused = await post(headers);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ error: 'invalid_signature' });
    }
    expect(await db.callRecording.findUniqueOrThrow({ where: { callId: call.id } })).toEqual(call.recording);
    // Signed by the account, it is taken, and changes nothing on a recording already settled (Telnyx not asked).
    const signed = await post(telnyxSignatureHeaders(signingKey(TELNYX_TWIN_PRIVATE_KEY), body));
    expect(signed.status).toBe(200);
    expect(await signed.json()).toEqual({ received: true, applied: false });
    expect(await db.callRecording.findUniqueOrThrow({ where: { callId: call.id } })).toEqual(call.recording);
  });
});
