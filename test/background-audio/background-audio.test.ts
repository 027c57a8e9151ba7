import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  backgroundAudioFromConfig,
  type BackgroundAudioAsset as Asset,
} from '../../api/background-audio/background-audio';
import { PLATFORM_BACKGROUND_AUDIO } from '../../lib/background-audio/platform-assets';
import { makePlatformAudioFile } from '../../lib/background-audio/platform-files';
import { SoxError } from '../../lib/background-audio/sox';
import { AudioRefused, measureUpload } from '../../lib/background-audio/uploads';
import { insertAgent } from '../support/agents';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';
import { execTestProcess } from '../support/processes';

const run = execTestProcess;
const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();

// Empty, and under a dot-folder like the default .data/background-audio: the API makes the platform files itself.
const workDir = mkdtempSync(path.join(os.tmpdir(), '.background-audio-'));
const platformDir = path.join(workDir, 'platform');
afterAll(() => rmSync(workDir, { recursive: true, force: true }));
const audioConfig = { BACKGROUND_AUDIO_DIR: platformDir, SOX_PATH: 'sox', AUDIO_DECODE_TIMEOUT_MS: 20_000 };

const api = await startTestApi({ db, url, temporal, backgroundAudio: backgroundAudioFromConfig(audioConfig) });
const viewer = await createTestWorkspace(db, { scopes: ['background_audio.view'] });
const editor = await createTestWorkspace(db, { scopes: ['background_audio.edit', 'background_audio.delete'] });
const other = await createTestWorkspace(db, { scopes: ['background_audio.edit', 'background_audio.delete'] });

/** Audio made by sox now: `sox -n ARGS file synth ...`. */
async function soxMade(name: string, args: string[], synth: string[]): Promise<Buffer> {
  const file = path.join(workDir, name);
  await run('sox', ['-n', ...args, file, 'synth', ...synth]);
  return readFileSync(file);
}

/** What sox says of a file: the length decoded to the end, and soxi's reading of the header. */
async function soxMeasures(bytes: Uint8Array, type: string) {
  const file = path.join(workDir, `measured-${Math.random().toString(36).slice(2)}.${type}`);
  writeFileSync(file, bytes);
  const { stderr } = await run('sox', ['-t', type, file, '-n', 'stat']);
  const { stdout } = await run('soxi', ['-D', file]);
  return { decoded: Number(/^Length \(seconds\):\s*([0-9.]+)/m.exec(stderr)![1]), soxi: Number(stdout.trim()) };
}

const list = async (key: string) => {
  const response = await api.request('GET', '/background-audio', { key });
  expect(response.status).toBe(200);
  return (await response.json()) as Asset[];
};

const upload = (key: string, body: unknown) => api.request('POST', '/background-audio', { key, body });
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** The previewUrl is this API's: fetched with the key, by its path. */
async function fetchPreview(key: string, previewUrl: string) {
  expect(previewUrl.startsWith(`${api.baseUrl}/background-audio/`)).toBe(true);
  const response = await api.request('GET', new URL(previewUrl).pathname, { key });
  return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
}

const wav = await soxMade('tone.wav', ['-r', '8000', '-c', '1', '-b', '16'], ['3', 'sine', '440']);
const mp3 = await soxMade('tone.mp3', ['-r', '16000', '-c', '1', '-C', '32'], ['2.5', 'sine', '300']);

describe('platform assets', () => {
  it('lists the platform loops first, made on demand, with the durations sox measures of their files', async () => {
    const assets = await list(viewer.key);
    const platform = assets.filter((asset) => asset.isPlatform);
    expect(platform.map(({ id, slug, label }) => ({ id, slug, label }))).toEqual(
      PLATFORM_BACKGROUND_AUDIO.map(({ id, slug, label }) => ({ id, slug, label })),
    );
    expect(assets.slice(0, platform.length)).toEqual(platform);
    // Made by the API into the empty directory, one file per asset.
    expect(readdirSync(platformDir).sort()).toHaveLength(PLATFORM_BACKGROUND_AUDIO.length);
    for (const asset of platform) {
      expect(Object.keys(asset).sort()).toEqual(['durationSecs', 'id', 'isPlatform', 'label', 'previewUrl', 'slug']);
      expect(asset.durationSecs).toBeGreaterThan(5);
      expect(asset.durationSecs).toBeLessThan(20);
      const { response, bytes } = await fetchPreview(viewer.key, asset.previewUrl);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('audio/mpeg');
      const measured = await soxMeasures(bytes, 'mp3');
      expect(asset.durationSecs).toBe(Math.round(measured.decoded * 1000) / 1000);
      expect(Math.abs(asset.durationSecs - measured.soxi)).toBeLessThan(0.1);
    }
    // Each loop is its own sound.
    expect(new Set(platform.map((asset) => asset.durationSecs)).size).toBe(platform.length);
  });

  it('makes a file once per recipe: a second make finds it', async () => {
    const dir = path.join(workDir, 'made-twice');
    const options = { dir, soxPath: 'sox', timeoutMs: 20_000 };
    const asset = PLATFORM_BACKGROUND_AUDIO[0]!;
    const first = await makePlatformAudioFile(options, asset);
    const second = await makePlatformAudioFile(options, asset);
    expect(first.made).toBe(true);
    expect(second).toEqual({ path: first.path, made: false });
    expect(readdirSync(dir)).toEqual([path.basename(first.path)]);
  });

  it('makes a file again on first use when it has gone', async () => {
    const asset = (await list(viewer.key)).find((listed) => listed.isPlatform)!;
    for (const file of readdirSync(platformDir)) rmSync(path.join(platformDir, file));
    const { response, bytes } = await fetchPreview(viewer.key, asset.previewUrl);
    expect(response.status).toBe(200);
    expect((await soxMeasures(bytes, 'mp3')).decoded).toBeCloseTo(asset.durationSecs, 3);
    expect(readdirSync(platformDir)).toHaveLength(1);
  });

  it('cannot be deleted: 403 forbidden, and the asset stays', async () => {
    const response = await api.request('DELETE', `/background-audio/${PLATFORM_BACKGROUND_AUDIO[0]!.id}`, {
      key: editor.key,
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ error: 'forbidden' });
    expect((await list(editor.key)).map((asset) => asset.id)).toContain(PLATFORM_BACKGROUND_AUDIO[0]!.id);
  });
});

describe('uploads', () => {
  it('stores a WAV made with sox, measures it and serves the same bytes at previewUrl', async () => {
    const response = await upload(editor.key, { slug: 'tone-wav', label: 'A tone', audio: base64(wav) });
    expect(response.status).toBe(201);
    const asset = (await response.json()) as Asset;
    expect(asset).toMatchObject({ slug: 'tone-wav', label: 'A tone', isPlatform: false, durationSecs: 3 });
    const listed = await list(editor.key);
    expect(listed.at(-1)).toEqual(asset);
    const { response: served, bytes } = await fetchPreview(editor.key, asset.previewUrl);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(bytes).equals(wav)).toBe(true);
    expect((await soxMeasures(bytes, 'wav')).decoded).toBe(3);
  });

  it('stores an MP3, its duration as sox decodes it', async () => {
    const response = await upload(editor.key, { slug: 'tone-mp3', label: 'Low tone', audio: base64(mp3) });
    expect(response.status).toBe(201);
    const asset = (await response.json()) as Asset;
    const expected = Math.round((await soxMeasures(mp3, 'mp3')).decoded * 1000) / 1000;
    expect(asset.durationSecs).toBe(expected);
    expect(asset.durationSecs).toBeGreaterThan(2.4);
    expect(asset.durationSecs).toBeLessThan(2.7);
    const { response: served, bytes } = await fetchPreview(editor.key, asset.previewUrl);
    expect(served.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(bytes).equals(mp3)).toBe(true);
    // Another workspace's key cannot hear it (the viewer's workspace is not the editor's).
    expect((await fetchPreview(viewer.key, asset.previewUrl)).response.status).toBe(403);
  });

  it('refuses what is not audio with 400 invalid_body at audio, and stores nothing', async () => {
    const before = await list(editor.key);
    const text = Buffer.from('Hello, this is a text file renamed to sound.mp3\n'.repeat(200));
    const disguised = Buffer.concat([Buffer.from('RIFF\x10\x00\x00\x00WAVE', 'latin1'), text]);
    const fakeMp3 = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x00]), text]);
    for (const bytes of [text, disguised, fakeMp3, Buffer.alloc(0)]) {
      const response = await upload(editor.key, { slug: 'not-audio', label: 'Not audio', audio: base64(bytes) });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: string; issues: Array<{ path: string[]; message: string }> };
      expect(body.error).toBe('invalid_body');
      expect(body.issues[0]!.path).toEqual(['audio']);
      expect(body.issues[0]!.message).toMatch(/^(not audio|too short)/);
    }
    expect(await list(editor.key)).toEqual(before);
  });

  it('refuses audio too short or too long to be a background', async () => {
    const click = await soxMade('click.wav', ['-r', '8000', '-c', '1'], ['0.2', 'sine', '440']);
    const hours = await soxMade('long.wav', ['-r', '1000', '-c', '1', '-b', '8'], ['601', 'brownnoise']);
    for (const [bytes, message] of [
      [click, /^too short/],
      [hours, /^too long/],
    ] as const) {
      const response = await upload(editor.key, { slug: 'wrong-length', label: 'x', audio: base64(bytes) });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { issues: Array<{ message: string }> }).issues[0]!.message).toMatch(message);
    }
  });

  it("stops a decoding that takes too long, refusing the upload; sox missing is not the caller's fault", async () => {
    const long = await soxMade('slow.wav', ['-r', '8000', '-c', '1', '-b', '8'], ['300', 'brownnoise']);
    await expect(measureUpload({ soxPath: 'sox', timeoutMs: 1 }, long)).rejects.toThrow(
      new AudioRefused('not audio: decoding took over 1 ms'),
    );
    const missing = measureUpload({ soxPath: path.join(workDir, 'no-sox'), timeoutMs: 5_000 }, wav);
    await expect(missing).rejects.toBeInstanceOf(SoxError);
    await expect(missing).rejects.toMatchObject({ kind: 'unavailable' });
  });

  it('refuses a body over 1 MB with 413, and audio over its limit under it with 400', async () => {
    const huge = JSON.stringify({ slug: 'huge', label: 'Huge', audio: 'A'.repeat(1024 * 1024) });
    const tooBig = await upload(editor.key, huge);
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toMatchObject({ error: 'internal_error' });
    const overLimit = await upload(editor.key, { slug: 'big', label: 'Big', audio: 'A'.repeat(960_004) });
    expect(overLimit.status).toBe(400);
    expect(((await overLimit.json()) as { issues: Array<{ path: string[] }> }).issues[0]!.path).toEqual(['audio']);
    const slugs = (await list(editor.key)).map((asset) => asset.slug);
    expect(slugs).not.toContain('huge');
    expect(slugs).not.toContain('big');
  });

  it('refuses bodies without the fields, or with a bad slug, with 400 invalid_body', async () => {
    for (const body of [{}, { slug: 'Bad Slug', label: 'x', audio: base64(wav) }, { slug: 'ok', audio: base64(wav) }]) {
      const response = await upload(editor.key, body);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_body');
    }
  });

  it("keeps slugs unique in a workspace, platform slugs included, even racing; another workspace's are its own", async () => {
    const taken = await upload(editor.key, { slug: 'tone-wav', label: 'Again', audio: base64(wav) });
    expect(taken.status).toBe(409);
    expect(await taken.json()).toMatchObject({ error: 'background_audio_slug_taken' });
    const platform = await upload(editor.key, { slug: 'soft-rain', label: 'My rain', audio: base64(wav) });
    expect(platform.status).toBe(409);
    const racing = await Promise.all(
      [1, 2, 3].map(() => upload(editor.key, { slug: 'raced', label: 'Raced', audio: base64(wav) })),
    );
    expect(racing.map((response) => response.status).sort()).toEqual([201, 409, 409]);
    const elsewhere = await upload(other.key, { slug: 'tone-wav', label: 'Theirs', audio: base64(wav) });
    expect(elsewhere.status).toBe(201);
  });

  it('keeps at most 50 uploads in a workspace: 409 background_audio_limit_reached, until one is deleted', async () => {
    const full = await createTestWorkspace(db, { scopes: ['background_audio.edit', 'background_audio.delete'] });
    await db.backgroundAudio.createMany({
      data: Array.from({ length: 49 }, (_, index) => ({
        workspaceId: full.workspaceId,
        slug: `filler-${index}`,
        label: 'Filler',
        durationSecs: 3,
        mediaType: 'audio/wav',
        byteSize: wav.length,
        sha256: 'filler',
        audio: new Uint8Array(wav),
      })),
    });
    const fiftieth = await upload(full.key, { slug: 'fiftieth', label: 'Fiftieth', audio: base64(wav) });
    expect(fiftieth.status).toBe(201);
    const refused = await upload(full.key, { slug: 'fifty-first', label: 'One more', audio: base64(wav) });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: 'background_audio_limit_reached' });
    expect(await db.backgroundAudio.count({ where: { workspaceId: full.workspaceId } })).toBe(50);
    const { id } = (await fiftieth.json()) as Asset;
    expect((await api.request('DELETE', `/background-audio/${id}`, { key: full.key })).status).toBe(204);
    const again = await upload(full.key, { slug: 'fifty-first', label: 'One more', audio: base64(wav) });
    expect(again.status).toBe(201);
  });

  it('needs background_audio.edit to upload; view is not enough', async () => {
    const response = await upload(viewer.key, { slug: 'viewer', label: 'x', audio: base64(wav) });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ error: 'forbidden', requiredPermission: 'background_audio.edit' });
  });
});

/** An agent row made directly (the agents API is tested elsewhere), using `backgroundAudioId` or silence. */
const agentOf = (workspaceId: string, backgroundAudioId: string | null = null) =>
  insertAgent(db, workspaceId, { backgroundAudioId });

describe('deleting an upload', () => {
  it("deletes the workspace's own, and its agents that used it go back to silence in the same step", async () => {
    const created = (await (
      await upload(editor.key, { slug: 'to-delete', label: 'Going', audio: base64(wav) })
    ).json()) as Asset;
    const using = await agentOf(editor.workspaceId, created.id);
    const onPlatform = await agentOf(editor.workspaceId, PLATFORM_BACKGROUND_AUDIO[1]!.id);
    const response = await api.request('DELETE', `/background-audio/${created.id}`, { key: editor.key });
    expect(response.status).toBe(204);
    expect((await db.agent.findUniqueOrThrow({ where: { id: using.id } })).backgroundAudioId).toBeNull();
    expect((await db.agent.findUniqueOrThrow({ where: { id: onPlatform.id } })).backgroundAudioId).toBe(
      PLATFORM_BACKGROUND_AUDIO[1]!.id,
    );
    expect((await list(editor.key)).map((asset) => asset.id)).not.toContain(created.id);
    expect(await db.backgroundAudio.count({ where: { id: created.id } })).toBe(0);
    const served = await api.request('GET', `/background-audio/${created.id}/audio`, { key: editor.key });
    expect(served.status).toBe(403);
    const again = await api.request('DELETE', `/background-audio/${created.id}`, { key: editor.key });
    expect(again.status).toBe(403);
  });

  it('an agent set to the upload while it is being deleted ends without it', async () => {
    const created = (await (
      await upload(editor.key, { slug: 'raced-delete', label: 'Raced', audio: base64(wav) })
    ).json()) as Asset;
    const racing = await agentOf(editor.workspaceId);
    // As an agent write does (api/agents/agent-references.ts): the upload locked FOR KEY SHARE, the agent set.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const writer = db.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM "BackgroundAudio" WHERE id = ${created.id}::uuid FOR KEY SHARE`;
        await tx.agent.update({ where: { id: racing.id }, data: { backgroundAudioId: created.id } });
        holding();
        await released;
      },
      { timeout: 60_000 },
    );
    await held;
    const deleting = api.request('DELETE', `/background-audio/${created.id}`, { key: editor.key });
    // The delete waits for the agent write's lock.
    await until(
      () =>
        db.$queryRaw<Array<{ waiting: number }>>`
          SELECT count(*)::int AS waiting FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND query ILIKE '%DELETE%BackgroundAudio%'`,
      (rows) => rows[0]!.waiting > 0,
    );
    release();
    await writer;
    expect((await deleting).status).toBe(204);
    expect((await db.agent.findUniqueOrThrow({ where: { id: racing.id } })).backgroundAudioId).toBeNull();
  });

  it("refuses another workspace's upload with 403 forbidden, leaking nothing, and leaves it and its agents alone", async () => {
    const theirs = (await (
      await upload(other.key, { slug: 'theirs', label: 'Theirs', audio: base64(wav) })
    ).json()) as Asset;
    const theirAgent = await agentOf(other.workspaceId, theirs.id);
    const unknown = await api.request('DELETE', '/background-audio/00000000-0000-4000-8000-000000000000', {
      key: editor.key,
    });
    const notUuid = await api.request('DELETE', '/background-audio/nope', { key: editor.key });
    const response = await api.request('DELETE', `/background-audio/${theirs.id}`, { key: editor.key });
    for (const refused of [unknown, notUuid, response]) {
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual({ error: 'forbidden' });
    }
    const heard = await api.request('GET', `/background-audio/${theirs.id}/audio`, { key: editor.key });
    expect(heard.status).toBe(403);
    expect((await list(editor.key)).map((asset) => asset.id)).not.toContain(theirs.id);
    expect((await list(other.key)).map((asset) => asset.id)).toContain(theirs.id);
    expect((await db.agent.findUniqueOrThrow({ where: { id: theirAgent.id } })).backgroundAudioId).toBe(theirs.id);
  });
});
