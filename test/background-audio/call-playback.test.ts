// The agent's background audio under a call (docs/features/background-audio.md#on-a-call), end to end on the real
// servers: the API and a worker on Temporal and PostgreSQL, the Telnyx twin as the carrier behind a recording proxy.
// A Telnyx call of an agent with background audio has it played under the conversation (playback_start, overlay,
// looped to the hang-up), fetched by the twin from the call's signed, expiring URL; an agent without one plays
// nothing; a tampered, re-aimed or expired URL opens nothing; Twilio is reported as not playing it. The twin's
// playback_start is held to Telnyx's description too.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backgroundAudioFromConfig } from '../../api/background-audio/background-audio';
import { TELNYX_TWIN_API_KEY } from '../../lib/carriers/twin';
import { telnyxBackgroundAudioUrl } from '../../lib/carriers/telnyx/telnyx-urls';
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
const connection = await connectCallers(
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

/** The bytes a URL answers, as Telnyx fetches it: no key. */
async function fetched(target: string) {
  const response = await fetch(target);
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

/** How long sox decodes the bytes to (to the end), as the given type. */
async function decodedSecs(bytes: Buffer, type: 'mp3' | 'wav') {
  const file = path.join(workDir, `decoded-${Math.random().toString(36).slice(2)}.${type}`);
  writeFileSync(file, bytes);
  const { stderr } = await execTestProcess('sox', ['-t', type, file, '-n', 'stat']);
  return Number(/^Length \(seconds\):\s*([0-9.]+)/m.exec(stderr)![1]);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const playbackLines = async (callControlId: string) =>
  (await telnyxTwinLog(twin.baseUrl, callControlId)).log.filter((entry) => entry.kind === 'playback');

describe("the agent's background audio on a Telnyx call", () => {
  it('is played under the conversation: playback_start with overlay and an endless loop, fetched by Telnyx from the signed URL (real MP3 audio)', async () => {
    const phone = '+14155569611';
    const { campaign } = await campaignWith({ backgroundAudioId: 'platform-office-hum' });
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['Navy, please.'] });
    const { result, call } = await callLead(campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'answered' });

    const commands = commandsTo(call.providerCallId!);
    expect(commands.map((command) => command.action)).toEqual(['conversation_relay_start', 'playback_start', 'hangup']);
    const playback = commands[1]!.body!;
    expect(playback).toEqual({
      audio_url: expect.any(String),
      audio_type: 'mp3',
      loop: 'infinity',
      overlay: true,
      target_legs: 'self',
      cache_audio: true,
      command_id: 'background-audio',
    });
    const audioUrl = new URL(playback.audio_url as string);
    expect(audioUrl.origin + audioUrl.pathname).toBe(
      `${api.baseUrl}/telephony/telnyx/${connection.id}/calls/${encodeURIComponent(call.attemptId)}/background-audio`,
    );
    expect(audioUrl.searchParams.get('audio')).toBe('platform-office-hum');
    // Open until the longest call and its margin are over, not for ever.
    const expires = Number(audioUrl.searchParams.get('expires'));
    expect(expires * 1000).toBeGreaterThan(Date.now() + 25 * 60_000);
    expect(expires * 1000).toBeLessThan(Date.now() + 32 * 60_000);
    // Every request the adapter sent for the call, and the twin's answer, is as Telnyx describes them.
    const sent = recorder.exchanges
      .filter((exchange) => exchange.url.includes(call.providerCallId!))
      .map((exchange) => ({
        method: exchange.method,
        url: `${recorder.url}${exchange.url}`,
        requestBody: exchange.body || undefined,
        status: exchange.status,
        contentType: exchange.responseContentType ?? undefined,
        responseBody: exchange.responseBody ? (JSON.parse(exchange.responseBody) as unknown) : undefined,
      }));
    expect(sent.map((exchange) => exchange.status)).toEqual([200, 200, 200]);
    expect(exchangeProblems(sent)).toEqual([]);

    // The twin fetched the URL and played what came, mixed over the relay's speech, until the hang-up.
    const lines = await playbackLines(call.providerCallId!);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.text).toMatch(
      /^started: http:\/\/\S+\/background-audio overlay=true loop=infinity target_legs=self audio_type=mp3 bytes=\d+ sha256=[0-9a-f]{64}$/,
    );
    const served = await fetched(audioUrl.href);
    expect(served.status).toBe(200);
    expect(served.type).toBe('audio/mpeg');
    expect(lines[0]!.text).toContain(`bytes=${served.bytes.length} sha256=${sha256(served.bytes)}`);
    // Real audio: sox decodes the whole of it (the office hum is a 12 s loop).
    expect(await decodedSecs(served.bytes, 'mp3')).toBeGreaterThan(11);
  });

  it('is played under the script walk as well, an upload sent as it is stored (WAV)', async () => {
    const phone = '+14155569612';
    const uploaded = await api.request('POST', '/background-audio', {
      key: owner.key,
      body: { slug: 'lobby', label: 'Lobby', audio: wav.toString('base64') },
    });
    expect(uploaded.status).toBe(201);
    const upload = (await uploaded.json()) as { id: string };
    const { campaign } = await campaignWith({ backgroundAudioId: upload.id, conversationEngine: 'gather' });
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['Navy, please.'] });
    const { call } = await callLead(campaign.id, phone);
    const playback = commandsTo(call.providerCallId!).find((command) => command.action === 'playback_start');
    expect(playback?.body).toMatchObject({ audio_type: 'wav', overlay: true, loop: 'infinity' });
    const lines = await playbackLines(call.providerCallId!);
    expect(lines.map((line) => line.text)).toEqual([expect.stringContaining(`sha256=${sha256(wav)}`)]);
  });

  it('sends an Ogg Vorbis upload as WAV, which Telnyx plays (MP3 and WAV only), decoded by sox', async () => {
    const phone = '+14155569604';
    const oggFile = path.join(workDir, 'rain.ogg');
    await execTestProcess('sox', ['-n', '-r', '8000', '-c', '1', oggFile, 'synth', '1.5', 'pinknoise']);
    const uploaded = await api.request('POST', '/background-audio', {
      key: owner.key,
      body: { slug: 'ogg-rain', label: 'Rain (Ogg)', audio: readFileSync(oggFile).toString('base64') },
    });
    expect(uploaded.status).toBe(201);
    const upload = (await uploaded.json()) as { id: string };
    const { campaign } = await campaignWith({ backgroundAudioId: upload.id });
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['Navy, please.'] });
    const { call } = await callLead(campaign.id, phone);
    const playback = commandsTo(call.providerCallId!).find((command) => command.action === 'playback_start')!;
    expect(playback.body).toMatchObject({ audio_type: 'wav', overlay: true, loop: 'infinity' });
    const served = await fetched(playback.body!.audio_url as string);
    expect(served).toMatchObject({ status: 200, type: 'audio/wav' });
    expect(served.bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(await decodedSecs(served.bytes, 'wav')).toBeCloseTo(1.5, 1);
    const lines = await playbackLines(call.providerCallId!);
    expect(lines.map((line) => line.text)).toEqual([expect.stringContaining(`sha256=${sha256(served.bytes)}`)]);
  });

  it('plays nothing for an agent without background audio', async () => {
    const phone = '+14155569613';
    const { campaign } = await campaignWith({ backgroundAudioId: null });
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['Navy, please.'] });
    const { result, call } = await callLead(campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'answered' });
    expect(commandsTo(call.providerCallId!).map((command) => command.action)).toEqual([
      'conversation_relay_start',
      'hangup',
    ]);
    expect(await playbackLines(call.providerCallId!)).toEqual([]);
  });

  it('opens nothing with a tampered, re-aimed or expired URL, or one of another connection (401 invalid_signature)', async () => {
    const phone = '+14155569614';
    const { campaign } = await campaignWith({ backgroundAudioId: 'platform-soft-rain' });
    await scriptTelnyxPersona(twin.baseUrl, { number: phone, answers: ['Navy, please.'] });
    const { call } = await callLead(campaign.id, phone);
    const signed = new URL(
      commandsTo(call.providerCallId!).find((command) => command.action === 'playback_start')!.body!
        .audio_url as string,
    );
    expect((await fetched(signed.href)).status).toBe(200);

    const refused = async (target: URL | string) => {
      const response = await fetch(target);
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ error: 'invalid_signature' });
    };
    const token = signed.searchParams.get('token')!;
    const tampered = new URL(signed);
    tampered.searchParams.set('token', `${token[0] === 'A' ? 'B' : 'A'}${token.slice(1)}`);
    await refused(tampered);
    // The same token for another asset (a platform one, or another workspace's upload id) or a later expiry.
    const reaimed = new URL(signed);
    reaimed.searchParams.set('audio', 'platform-cafe-murmur');
    await refused(reaimed);
    const extended = new URL(signed);
    extended.searchParams.set('expires', String(Number(signed.searchParams.get('expires')) + 3600));
    await refused(extended);
    const noToken = new URL(signed);
    noToken.searchParams.delete('token');
    await refused(noToken);
    // Signed with the connection's key, but expired a second ago.
    const grant = {
      connectionId: connection.id,
      attemptId: call.attemptId,
      audioId: 'platform-soft-rain',
      expiresAt: Math.floor(Date.now() / 1000) - 1,
    };
    await refused(telnyxBackgroundAudioUrl(api.baseUrl, grant, TELNYX_TWIN_API_KEY));
    // A connection that is not one, and another connection's call.
    await refused(
      `${api.baseUrl}/telephony/telnyx/not-a-connection/calls/x/background-audio?${signed.searchParams.toString()}`,
    );
    await refused(signed.href.replace(connection.id, '00000000-0000-4000-8000-000000000000'));
    // Signed by a key that is not the connection's.
    await refused(
      telnyxBackgroundAudioUrl(api.baseUrl, { ...grant, expiresAt: grant.expiresAt + 3600 }, 'KEY_someone_else'),
    );
  });

  it('reports, on the agent, that Telnyx plays it and Twilio does not; nothing when it has none', async () => {
    const { agent } = await campaignWith({ backgroundAudioId: 'platform-cafe-murmur' });
    const read = await api.request('GET', `/agents/${agent.id}`, { key: owner.key });
    expect(await read.json()).toMatchObject({
      backgroundAudioId: 'platform-cafe-murmur',
      backgroundAudioPlayback: { telnyx: 'played', twilio: 'not_supported' },
    });
    const { agent: silent } = await campaignWith({ backgroundAudioId: null });
    const none = await api.request('GET', `/agents/${silent.id}`, { key: owner.key });
    expect(await none.json()).toMatchObject({ backgroundAudioId: null, backgroundAudioPlayback: null });
  });
});

describe("the twin's playback_start, as Telnyx describes it", () => {
  it('plays an overlay over audio that plays, fetches the URL, sends call.playback.started and ended as described, and refuses what the description refuses', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/audio.wav') res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav);
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
    const refusedWith = async (body: Record<string, unknown>, pointer: string) => {
      const error = await twin.client.calls.actions.startPlayback(id, body as never).then(
        () => null,
        (failure: { status?: number; error?: { errors?: { source?: { pointer?: string } }[] } }) => failure,
      );
      expect(error?.status, JSON.stringify(body)).toBe(422);
      expect(error?.error?.errors?.[0]?.source?.pointer).toBe(pointer);
    };
    const audioUrl = `http://127.0.0.1:${port}/audio.wav`;
    // Nothing plays yet: an overlay has nothing to be mixed on top of.
    await refusedWith({ audio_url: audioUrl, overlay: true }, '/overlay');
    await refusedWith({ audio_url: audioUrl, overlay: true, target_legs: 'both' }, '/target_legs');
    await refusedWith({ audio_url: audioUrl, loop: 101 }, '/loop');
    await refusedWith({ audio_url: audioUrl, audio_type: 'ogg' }, '/audio_type');
    await refusedWith({ audio_url: audioUrl, media_name: 'mine' }, '/media_name');
    await refusedWith({}, '/audio_url');

    await twin.client.calls.actions.speak(id, { payload: 'Please hold on.', voice: 'AWS.Polly.Joanna-Neural' });
    await twin.client.calls.actions.startPlayback(id, {
      audio_url: audioUrl,
      audio_type: 'wav',
      loop: 'infinity',
      overlay: true,
      target_legs: 'self',
      command_id: 'bed',
    });
    // A file that is not there: played as Telnyx reports it, ended file_not_found.
    await twin.client.calls.actions.startPlayback(id, {
      audio_url: `http://127.0.0.1:${port}/missing.wav`,
      audio_type: 'wav',
      overlay: true,
    });
    await until(
      async () => receiver.of(id),
      (webhooks) => webhooks.filter((webhook) => webhook.eventType.startsWith('call.playback')).length >= 2,
      20_000,
    );
    await twin.client.calls.actions.hangup(id, {});
    const all = await until(
      async () => receiver.of(id),
      (webhooks) => webhooks.some((webhook) => webhook.eventType === 'call.hangup'),
      20_000,
    );
    const playbacks = all.filter((webhook) => webhook.eventType.startsWith('call.playback'));
    expect(playbacks.map((webhook) => [webhook.eventType, webhook.payload.media_url, webhook.payload.status])).toEqual([
      ['call.playback.started', audioUrl, undefined],
      ['call.playback.ended', `http://127.0.0.1:${port}/missing.wav`, 'file_not_found'],
      ['call.playback.ended', audioUrl, 'call_hangup'],
    ]);
    expect(playbacks[1]!.payload.status_detail).toContain('HTTP error code 404');
    for (const webhook of all) expect(webhook.problems, webhook.eventType).toEqual([]);
    expect(
      exchangeProblems(
        twin.exchanges.filter((exchange) => exchange.url.includes('playback_start') && exchange.status === 200),
      ),
    ).toEqual([]);
    server.close();
  });
});

function callLead(campaignId: string, phone: string) {
  return calledLead(db, { api, temporal }, owner, campaignId, phone);
}
