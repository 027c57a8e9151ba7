// The agent's background audio on a call (docs/features/background-audio.md#on-a-call), end to end on the real
// servers: the API and a worker on Temporal and PostgreSQL, the Telnyx twin as the carrier behind a recording proxy.
// Neither carrier's protocol mixes a file under the agent's speech, so the agent's readiness says not_supported on
// both and a Telnyx call of an agent with background audio commands no playback at all (relay or script walk). The
// twin's playback_start is held to Telnyx's description: an overlay is refused unless an overlay=false file plays.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backgroundAudioFromConfig } from '../../api/background-audio/background-audio';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
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
import { listenOnLoopback } from '../support/http-receiver';
import { execTestProcess } from '../support/processes';
import { startRecordingProxy } from '../support/recording-proxy';
import {
  callControlCommands,
  exchangeProblems,
  scriptTelnyxPersona,
  startTestTelnyxTwin,
  startWebhookReceiver,
  TELNYX_TWIN_CONNECTION_ID,
  telnyxTwinLog,
} from '../support/telnyx-twin';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const keyring = keyringSchema.parse(newKeyringEntry('k1'));
const workDir = mkdtempSync(path.join(os.tmpdir(), '.background-audio-call-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));
const backgroundAudio = backgroundAudioFromConfig({
  BACKGROUND_AUDIO_DIR: path.join(workDir, 'platform'),
  SOX_PATH: 'sox',
  AUDIO_DECODE_TIMEOUT_MS: 20_000,
});
const twin = await startTestTelnyxTwin(db, { timeScale: 0.04 });
const recorder = await startRecordingProxy(new URL(twin.baseUrl).origin);
const simulated = await startTestCarrier(db);
const { api } = await startCarrierPath(db, {
  url,
  temporal,
  keyring,
  fallback: simulated.client,
  api: { conversationEngine: 'relay', backgroundAudio },
});

const owner = await createTestWorkspace(db, {
  scopes: ['campaigns.edit', 'campaigns.view', 'agents.edit', 'agents.view', 'background_audio.edit'],
});
const caller = '+14155569601';
await connectCallers(
  db,
  keyring,
  {
    workspaceId: owner.workspaceId,
    provider: 'telnyx-twin',
    baseUrl: `${recorder.url}/v2`,
    account: TELNYX_TWIN_ACCOUNT,
  },
  caller,
);

const QUESTIONS = ['What colour would you like for the shoes?'];
/** A second of 440 Hz as a 16-bit WAV, made by sox: an upload, and what the twin's own test plays. */
const wavFile = path.join(workDir, 'lobby.wav');
await execTestProcess('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', wavFile, 'synth', '1', 'sine', '440']);
const wav = readFileSync(wavFile);

async function campaignWith(columns: { backgroundAudioId?: string | null; conversationEngine?: 'relay' | 'gather' }) {
  const agent = await insertShoeShopAgent(db, owner.workspaceId, {
    questions: QUESTIONS,
    language: 'en-US',
    ...columns,
  });
  const campaign = await startedAgentCampaign(db, api, owner, { name: 'Background audio', caller, agentId: agent.id });
  return { agent, campaign };
}

/** The requests the adapter sent for a call, as Call Control actions. */
const commandsTo = (callControlId: string) => callControlCommands(recorder.exchanges, callControlId);

const playbackLines = async (callControlId: string) =>
  (await telnyxTwinLog(twin.baseUrl, callControlId)).log.filter((entry) => entry.kind === 'playback');

describe("the agent's background audio on a call", () => {
  it('is reported on the agent as played on neither carrier (not_supported), and null when it has none', async () => {
    const { agent } = await campaignWith({ backgroundAudioId: 'platform-cafe-murmur' });
    const read = await api.request('GET', `/agents/${agent.id}`, { key: owner.key });
    expect(await read.json()).toMatchObject({
      backgroundAudioId: 'platform-cafe-murmur',
      backgroundAudioPlayback: { telnyx: 'not_supported', twilio: 'not_supported' },
    });
    const { agent: silent } = await campaignWith({ backgroundAudioId: null });
    const none = await api.request('GET', `/agents/${silent.id}`, { key: owner.key });
    expect(await none.json()).toMatchObject({ backgroundAudioId: null, backgroundAudioPlayback: null });
  });

  it('is not commanded on a Telnyx call under ConversationRelay: no playback_start reaches the twin', async () => {
    const phone = '+14155569611';
    const { campaign } = await campaignWith({ backgroundAudioId: 'platform-office-hum' });
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['Navy, please.'] });
    const { result, call } = await callLead(campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'answered' });
    expect(commandsTo(call.providerCallId!).map((command) => command.action)).toEqual([
      'conversation_relay_start',
      'hangup',
    ]);
    expect(await playbackLines(call.providerCallId!)).toEqual([]);
  });

  it('is not commanded under the script walk either, for an upload', async () => {
    const phone = '+14155569612';
    const uploaded = await api.request('POST', '/background-audio', {
      key: owner.key,
      body: { slug: 'lobby', label: 'Lobby', audio: wav.toString('base64') },
    });
    expect(uploaded.status).toBe(201);
    const upload = (await uploaded.json()) as { id: string };
    const { campaign } = await campaignWith({ backgroundAudioId: upload.id, conversationEngine: 'gather' });
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['Navy, please.'] });
    const { result, call } = await callLead(campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'answered' });
    const actions = commandsTo(call.providerCallId!).map((command) => command.action);
    expect(actions).toContain('hangup');
    expect(actions).not.toContain('playback_start');
    expect(await playbackLines(call.providerCallId!)).toEqual([]);
  });
});

describe("the twin's playback_start, as Telnyx describes it", () => {
  it('refuses an overlay unless an overlay=false file plays (speech is not one), queues files, and sends call.playback.started and ended as described', async () => {
    const server = createServer((req, res) => {
      if (req.url?.endsWith('.wav') && req.url !== '/missing.wav')
        res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav);
      else res.writeHead(404).end();
    });
    const port = await listenOnLoopback(server);
    const receiver = await startWebhookReceiver();
    const dial = await twin.client.calls.dial({
      connection_id: TELNYX_TWIN_CONNECTION_ID,
      to: '+14155569630',
      from: caller,
      webhook_url: receiver.url(),
    });
    const id = dial.data!.call_control_id!;
    await until(
      async () => receiver.of(id),
      (webhooks) => webhooks.some((webhook) => webhook.eventType === 'call.answered'),
      20_000,
    );
    const refusal = (body: Record<string, unknown>) =>
      twin.client.calls.actions.startPlayback(id, body as never).then(
        () => null,
        (failure: { status?: number; error?: { errors?: { code?: string; source?: { pointer?: string } }[] } }) =>
          failure,
      );
    const refusedWith = async (body: Record<string, unknown>, pointer: string, code?: string) => {
      const error = await refusal(body);
      expect(error?.status, JSON.stringify(body)).toBe(422);
      expect(error?.error?.errors?.[0]?.source?.pointer).toBe(pointer);
      if (code) expect(error?.error?.errors?.[0]?.code).toBe(code);
    };
    const url = (name: string) => `http://127.0.0.1:${port}/${name}`;
    // Nothing plays: an overlay has no file to be mixed on top of.
    await refusedWith({ audio_url: url('bed.wav'), audio_type: 'wav', overlay: true }, '/overlay', '90033');
    await refusedWith({ audio_url: url('bed.wav'), overlay: true, target_legs: 'both' }, '/target_legs');
    await refusedWith({ audio_url: url('bed.wav'), loop: 101 }, '/loop');
    await refusedWith({ audio_url: url('bed.wav'), audio_type: 'ogg' }, '/audio_type');
    await refusedWith({ audio_url: url('bed.wav'), media_name: 'mine' }, '/media_name');
    await refusedWith({}, '/audio_url');
    // Speech is not an audio file: an overlay over a speak alone is refused as well.
    await twin.client.calls.actions.speak(id, { payload: 'Please hold on.', voice: 'AWS.Polly.Joanna-Neural' });
    await refusedWith({ audio_url: url('bed.wav'), audio_type: 'wav', overlay: true }, '/overlay', '90033');
    // A file that cannot be fetched plays nothing, so it is nothing to overlay either.
    await twin.client.calls.actions.startPlayback(id, { audio_url: url('missing.wav'), audio_type: 'wav' });
    await refusedWith({ audio_url: url('bed.wav'), audio_type: 'wav', overlay: true }, '/overlay', '90033');

    // An overlay=false file plays: an overlay is mixed on top of it, and a second file waits in its queue.
    await twin.client.calls.actions.startPlayback(id, {
      audio_url: url('hold.wav'),
      audio_type: 'wav',
      loop: 'infinity',
    });
    await twin.client.calls.actions.startPlayback(id, {
      audio_url: url('bed.wav'),
      audio_type: 'wav',
      loop: 'infinity',
      overlay: true,
      target_legs: 'self',
    });
    await twin.client.calls.actions.startPlayback(id, { audio_url: url('next.wav'), audio_type: 'wav' });
    await until(
      async () => (await playbackLines(id)).length,
      (count) => count >= 4,
      20_000,
    );
    await twin.client.calls.actions.hangup(id, {});
    const all = await until(
      async () => receiver.of(id),
      (webhooks) => webhooks.some((webhook) => webhook.eventType === 'call.hangup'),
      20_000,
    );
    const playbacks = all.filter((webhook) => webhook.eventType.startsWith('call.playback'));
    expect(
      playbacks.map((webhook) => [
        webhook.eventType,
        webhook.payload.media_url,
        webhook.payload.overlay,
        webhook.payload.status,
      ]),
    ).toEqual([
      ['call.playback.ended', url('missing.wav'), false, 'file_not_found'],
      ['call.playback.started', url('hold.wav'), false, undefined],
      ['call.playback.started', url('bed.wav'), true, undefined],
      ['call.playback.ended', url('hold.wav'), false, 'call_hangup'],
      ['call.playback.ended', url('bed.wav'), true, 'call_hangup'],
    ]);
    expect(playbacks[0]!.payload.status_detail).toContain('HTTP error code 404');
    expect((await playbackLines(id)).map((line) => line.text!.split(' ')[0])).toEqual([
      'failed:',
      'started:',
      'started:',
      'queued:',
    ]);
    for (const webhook of all) expect(webhook.problems, webhook.eventType).toEqual([]);
    const sent = twin.exchanges.filter((exchange) => exchange.url.includes('playback_start'));
    expect(exchangeProblems(sent.filter((exchange) => exchange.status === 200))).toEqual([]);
    // The refusals answer in Telnyx's error shape (their requests were wrong on purpose, the overlays' were not).
    expect(exchangeProblems(sent).filter((problem) => !problem.includes(' request: '))).toEqual([]);
    expect(sent.filter((exchange) => exchange.status === 422)).toHaveLength(8);
    server.close();
  });
});

function callLead(campaignId: string, phone: string) {
  return calledLead(db, { api, temporal }, owner, campaignId, phone);
}
