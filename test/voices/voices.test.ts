import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEspeakNgSynthesizer } from '../../lib/voices/espeak-ng-speech';
import type { SpeechSynthesizer } from '../../lib/voices/speech';
import { createVoicePreviews, previewCacheKey } from '../../api/voices/voice-previews';
import { VOICES, previewSentenceOf } from '../../lib/voices/voices';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';
import { execTestProcess } from '../support/processes';
import { SynthesizeSpeechCommand } from '@aws-sdk/client-polly';
import { parseConfig } from '../../lib/config';
import { previewSynthesizerFromConfig } from '../../lib/providers';
import { POLLY_VOICES } from '../../lib/carriers/polly-voices';
import { DEVELOPMENT_POLLY_CREDENTIALS, startPollyTwin, TWIN_REGION, twinClient } from '../support/polly-twin';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();

// Under a dot-folder, like the default .data/voice-previews (a file server that skips dotfiles would 404 it).
const cacheDir = path.join(mkdtempSync(path.join(os.tmpdir(), '.voices-')), 'voice-previews');
afterAll(() => rmSync(path.dirname(cacheDir), { recursive: true, force: true }));

/** The real synthesiser, counting what it is asked to speak. */
function countingEspeak(espeakPath = 'espeak-ng') {
  const real = createEspeakNgSynthesizer({ espeakPath, lamePath: 'lame', timeoutMs: 20_000 });
  const spoken: string[] = [];
  const synthesizer: SpeechSynthesizer = {
    name: real.name,
    engineVoiceOf: (voice) => real.engineVoiceOf(voice),
    version: () => real.version(),
    synthesize: (engineVoice, text) => {
      spoken.push(engineVoice);
      return real.synthesize(engineVoice, text);
    },
  };
  return { synthesizer, spoken };
}

const espeak = countingEspeak();
const api = await startTestApi({
  db,
  url,
  temporal,
  voicePreviews: createVoicePreviews({ dir: cacheDir, synthesizer: espeak.synthesizer }),
});
const viewer = await createTestWorkspace(db, { scopes: ['agents.view'] });
const editor = await createTestWorkspace(db, { scopes: ['agents.edit'] });
const otherArea = await createTestWorkspace(db, { scopes: ['campaigns.view'] });
const unscoped = await createTestWorkspace(db);

const FRENCH = 'espeak-ng/fr Amélie';
const previewPath = (id: string, v1 = false) => `${v1 ? '/v1' : ''}/voices/${encodeURIComponent(id)}/preview`;

/** How long an MP3 plays, as sox decodes it. */
async function durationOf(mp3: Uint8Array): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'preview-'));
  try {
    const file = path.join(dir, 'preview.mp3');
    writeFileSync(file, mp3);
    const { stdout } = await execTestProcess('soxi', ['-D', file]);
    return Number(stdout.trim());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function preview(id: string, options: { key?: string; v1?: boolean; api?: typeof api } = {}) {
  const response = await (options.api ?? api).request('GET', previewPath(id, options.v1), {
    key: options.key ?? viewer.key,
  });
  const body = new Uint8Array(await response.arrayBuffer());
  const json = response.headers.get('content-type')?.startsWith('application/json');
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    synthesizer: response.headers.get('x-preview-synthesizer'),
    body,
    error: json ? (JSON.parse(new TextDecoder().decode(body)) as Record<string, unknown>) : null,
  };
}

describe('GET /voices', () => {
  it('lists every voice at once: id, name, language, provider', async () => {
    const response = await api.request('GET', '/voices', { key: viewer.key });
    expect(response.status).toBe(200);
    const voices = (await response.json()) as Array<Record<string, string>>;
    expect(voices).toEqual(VOICES.map(({ id, name, language, provider }) => ({ id, name, language, provider })));
    expect(voices.map((voice) => voice.id)).toContain(FRENCH);
    expect(new Set(voices.map((voice) => voice.provider))).toEqual(new Set(['espeak-ng', 'simulated']));
  });

  it('needs agents.view (or a scope that includes it); keys without scopes are refused off /v1', async () => {
    expect((await api.request('GET', '/voices', { key: editor.key })).status).toBe(200);
    const refused = await api.request('GET', '/voices', { key: otherArea.key });
    expect([refused.status, await refused.json()]).toEqual([
      403,
      { error: 'forbidden', requiredPermission: 'agents.view' },
    ]);
    const unscopedAnswer = await api.request('GET', '/voices', { key: unscoped.key });
    expect([unscopedAnswer.status, await unscopedAnswer.json()]).toEqual([403, { error: 'api_key_not_scoped' }]);
  });
});

describe('voice previews', () => {
  it('answers a real MP3 of the voice, on both paths, with an id that needs URL-encoding', async () => {
    for (const [id, v1] of [
      ['espeak-ng/en-us', true],
      ['espeak-ng/en-us', false],
      [FRENCH, false],
      [FRENCH, true],
    ] as const) {
      const answer = await preview(id, { v1 });
      expect([answer.status, answer.type, answer.synthesizer], `${id} v1=${v1}`).toEqual([
        200,
        'audio/mpeg',
        'espeak-ng',
      ]);
      const seconds = await durationOf(answer.body);
      expect(seconds, id).toBeGreaterThan(1);
      expect(seconds, id).toBeLessThan(15);
    }
    // The French voice speaks French: a sentence of its own, a file of its own.
    expect(previewSentenceOf(VOICES.find((voice) => voice.id === FRENCH)!)).toMatch(/^Bonjour/);
  });

  it('synthesises a preview once: the second request, and a restarted API, are served from the cache file', async () => {
    const id = 'espeak-ng/de';
    const before = espeak.spoken.length;
    // Concurrent first requests share one synthesis.
    const first = await Promise.all([preview(id), preview(id, { v1: true }), preview(id)]);
    expect(first.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(espeak.spoken.slice(before)).toEqual(['de']);
    const voice = VOICES.find((candidate) => candidate.id === id)!;
    const key = previewCacheKey(id, previewSentenceOf(voice), await espeak.synthesizer.version());
    expect(existsSync(path.join(cacheDir, `${key}.mp3`))).toBe(true);
    // No temporary file is left behind.
    expect(readdirSync(cacheDir).filter((name) => name.endsWith('.tmp'))).toEqual([]);

    const second = await preview(id);
    expect(second.status).toBe(200);
    expect(Buffer.from(second.body).equals(Buffer.from(first[0]!.body))).toBe(true);
    expect(espeak.spoken.slice(before)).toEqual(['de']);

    // Another process on the same cache directory: no synthesis at all.
    const restarted = countingEspeak();
    const restartedApi = await startTestApi({
      db,
      url,
      temporal,
      voicePreviews: createVoicePreviews({ dir: cacheDir, synthesizer: restarted.synthesizer }),
    });
    const afterRestart = await preview(id, { api: restartedApi });
    expect([afterRestart.status, afterRestart.type]).toEqual([200, 'audio/mpeg']);
    expect(Buffer.from(afterRestart.body).equals(Buffer.from(first[0]!.body))).toBe(true);
    expect(restarted.spoken).toEqual([]);
  });

  it('404 voice_not_found for an unknown voice; 501 preview_not_supported for a voice without previews', async () => {
    for (const v1 of [true, false]) {
      expect((await preview('espeak-ng/xx-unknown', { v1 })).error).toEqual({ error: 'voice_not_found' });
      expect((await preview('espeak-ng/xx-unknown', { v1 })).status).toBe(404);
      const simulated = await preview('simulated/studio', { v1 });
      expect([simulated.status, simulated.error]).toEqual([501, { error: 'preview_not_supported' }]);
    }
  });

  it('502 provider_error with upstreamStatus when the synthesiser cannot run or fails', async () => {
    const brokenDir = mkdtempSync(path.join(os.tmpdir(), 'voice-previews-broken-'));
    afterAll(() => rmSync(brokenDir, { recursive: true, force: true }));
    const missing = await startTestApi({
      db,
      url,
      temporal,
      voicePreviews: createVoicePreviews({
        dir: brokenDir,
        synthesizer: countingEspeak('/nonexistent/espeak-ng').synthesizer,
      }),
    });
    const answer = await preview('espeak-ng/en-us', { api: missing });
    expect([answer.status, answer.error]).toEqual([502, { error: 'provider_error', upstreamStatus: 503 }]);

    // A synthesiser that runs and exits non-zero: `false` answers --version and everything else with 1.
    const failing = await startTestApi({
      db,
      url,
      temporal,
      voicePreviews: createVoicePreviews({
        dir: brokenDir,
        synthesizer: countingEspeak('false').synthesizer,
      }),
    });
    const failed = await preview('espeak-ng/en-us', { api: failing, v1: true });
    expect([failed.status, failed.error]).toEqual([502, { error: 'provider_error', upstreamStatus: 500 }]);

    // A synthesiser that hangs is killed at the timeout.
    const hanging = path.join(brokenDir, 'hanging-espeak-ng');
    writeFileSync(hanging, '#!/bin/sh\n[ "$1" = --version ] && { echo "hanging 1.0"; exit 0; }\nexec sleep 30\n', {
      mode: 0o755,
    });
    const slow = await startTestApi({
      db,
      url,
      temporal,
      voicePreviews: createVoicePreviews({
        dir: path.join(brokenDir, 'cache'),
        synthesizer: createEspeakNgSynthesizer({ espeakPath: hanging, lamePath: 'lame', timeoutMs: 500 }),
      }),
    });
    const timedOut = await preview('espeak-ng/en-gb', { api: slow });
    expect([timedOut.status, timedOut.error]).toEqual([502, { error: 'provider_error', upstreamStatus: 504 }]);
    expect(readdirSync(brokenDir)).toEqual(['hanging-espeak-ng']);
  });

  it('needs agents.view off /v1; on /v1 a key without scopes passes, a key of another area does not', async () => {
    expect((await preview('espeak-ng/en-us', { key: editor.key })).status).toBe(200);
    expect((await preview('espeak-ng/en-us', { key: otherArea.key, v1: true })).error).toEqual({
      error: 'forbidden',
      requiredPermission: 'agents.view',
    });
    expect((await preview('espeak-ng/en-us', { key: unscoped.key })).error).toEqual({ error: 'api_key_not_scoped' });
    const v1 = await preview('espeak-ng/en-us', { key: unscoped.key, v1: true });
    expect([v1.status, v1.type]).toEqual([200, 'audio/mpeg']);
  });
});

// Previews by Amazon Polly, through the Polly twin.
const { twin, endpoint } = await startPollyTwin();
type PollyConfig = Parameters<typeof previewSynthesizerFromConfig>[0];
const pollyConfig = (overrides: Partial<PollyConfig> = {}): PollyConfig => ({
  ESPEAK_NG_PATH: 'espeak-ng',
  LAME_PATH: 'lame',
  SPEECH_TIMEOUT_MS: 10_000,
  VOICE_PREVIEW_SYNTHESIZER: 'polly-twin',
  POLLY_REGION: TWIN_REGION,
  POLLY_ENDPOINT: endpoint,
  POLLY_ACCESS_KEY_ID: DEVELOPMENT_POLLY_CREDENTIALS.accessKeyId,
  POLLY_SECRET_ACCESS_KEY: DEVELOPMENT_POLLY_CREDENTIALS.secretAccessKey,
  ...overrides,
});
const pollyDir = mkdtempSync(path.join(os.tmpdir(), 'voice-previews-polly-'));
afterAll(() => rmSync(pollyDir, { recursive: true, force: true }));
const pollyApi = (dir: string, overrides: Partial<PollyConfig> = {}, maxFiles?: number) =>
  startTestApi({
    db,
    url,
    temporal,
    voicePreviews: createVoicePreviews({
      dir,
      synthesizer: previewSynthesizerFromConfig(pollyConfig(overrides)),
      maxFiles,
    }),
  });
const withPolly = await pollyApi(path.join(pollyDir, 'cache'));
const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

describe('previews by Amazon Polly (docs/features/voices.md#who-synthesises-previews), through the Polly twin', () => {
  it("plays the Polly voice calls speak with: the twin's audio of that voice, neural, for the preview's sentence", async () => {
    for (const id of ['espeak-ng/en-gb', FRENCH]) {
      twin.reset();
      const answer = await preview(id, { api: withPolly });
      expect([answer.status, answer.type, answer.synthesizer], id).toEqual([200, 'audio/mpeg', 'polly-twin']);
      const voice = VOICES.find((candidate) => candidate.id === id)!;
      // The voice Telnyx and ConversationRelay speak (Amy; Léa for French: Céline has no neural voice).
      const pollyVoice = POLLY_VOICES[id]!.neural;
      expect(twin.syntheses.map(({ VoiceId, Engine, Text }) => ({ VoiceId, Engine, Text }))).toEqual([
        { VoiceId: pollyVoice, Engine: 'neural', Text: previewSentenceOf(voice) },
      ]);
      // The same request of the twin's own, through the SDK: the same bytes.
      const direct = await twinClient(endpoint).send(
        new SynthesizeSpeechCommand({
          VoiceId: pollyVoice as 'Amy',
          Engine: 'neural',
          OutputFormat: 'mp3',
          SampleRate: '24000',
          Text: previewSentenceOf(voice),
        }),
      );
      const directAudio = await direct.AudioStream!.transformToByteArray();
      expect(sha256(answer.body), id).toBe(sha256(directAudio));
      expect(sha256(answer.body), id).toBe(twin.syntheses[0]!.audioSha256);
      expect(await durationOf(answer.body), id).toBeGreaterThan(1);
    }
    // The voice of simulated calls has no audio, with Polly as with espeak-ng.
    expect((await preview('simulated/studio', { api: withPolly })).status).toBe(501);
  });

  it('asks Polly once per voice: the second preview comes from the cache, which keeps at most PREVIEW_CACHE_MAX_FILES files', async () => {
    twin.reset();
    const bounded = await pollyApi(path.join(pollyDir, 'bounded'), {}, 2);
    for (const id of ['espeak-ng/en-us', 'espeak-ng/de', 'espeak-ng/es', 'espeak-ng/es'])
      expect((await preview(id, { api: bounded })).synthesizer, id).toBe('polly-twin');
    expect(twin.syntheses.map((synthesis) => synthesis.VoiceId)).toEqual(['Joanna', 'Vicki', 'Lucia']);
    const files = readdirSync(path.join(pollyDir, 'bounded'));
    expect(files.filter((name) => name.endsWith('.mp3'))).toHaveLength(2);
  });

  it('a failing or unreachable Polly is 502 provider_error, never an espeak-ng preview in its place', async () => {
    const dir = path.join(pollyDir, 'failing');
    const failing = await pollyApi(dir);
    twin.failNext(2); // the adapter's two attempts
    const failed = await preview('espeak-ng/en-us', { api: failing });
    expect([failed.status, failed.error]).toEqual([502, { error: 'provider_error', upstreamStatus: 500 }]);
    const wrongKey = await pollyApi(dir, { POLLY_SECRET_ACCESS_KEY: 'not-the-twin-secret' });
    const refused = await preview('espeak-ng/en-us', { api: wrongKey });
    expect([refused.status, refused.error]).toEqual([502, { error: 'provider_error', upstreamStatus: 500 }]);
    const unreachable = await pollyApi(dir, { POLLY_ENDPOINT: 'http://127.0.0.1:9' });
    const down = await preview('espeak-ng/en-us', { api: unreachable });
    expect([down.status, down.error]).toEqual([502, { error: 'provider_error', upstreamStatus: 503 }]);
    expect(existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith('.mp3')) : []).toEqual([]);
  });

  it('is chosen by VOICE_PREVIEW_SYNTHESIZER; polly-twin needs its endpoint and key, a key is both or neither', () => {
    const base = { DATABASE_URL: 'postgresql://u@localhost/db' };
    expect(parseConfig(base).VOICE_PREVIEW_SYNTHESIZER).toBe('espeak-ng');
    expect(() => parseConfig({ ...base, VOICE_PREVIEW_SYNTHESIZER: 'polly-twin' })).toThrow(
      /POLLY_ENDPOINT is required/,
    );
    expect(() =>
      parseConfig({ ...base, VOICE_PREVIEW_SYNTHESIZER: 'amazon-polly', POLLY_ACCESS_KEY_ID: 'AKIA' }),
    ).toThrow(/POLLY_SECRET_ACCESS_KEY is required/);
    expect(parseConfig({ ...base, VOICE_PREVIEW_SYNTHESIZER: 'amazon-polly' }).POLLY_REGION).toBe('us-east-1');
    expect(previewSynthesizerFromConfig({ ...pollyConfig(), VOICE_PREVIEW_SYNTHESIZER: 'amazon-polly' }).name).toBe(
      'amazon-polly',
    );
  });
});
