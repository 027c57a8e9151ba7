import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { RunningApi } from './api';
import type { TestWorkspace } from './workspace';

/**
 * sox's reading of a recording (WAV, or MP3 by `extension`): its channels, its length in seconds and its loudest sample
 * (0 to 1; 0: silence). The recordings tests hear what the product streams, and what the twins serve, with it.
 */
export function soxInfo(audio: Uint8Array, extension: 'wav' | 'mp3' = 'wav') {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'recording-')), `call.${extension}`);
  writeFileSync(file, audio);
  const channels = Number(execFileSync('sox', ['--i', '-c', file], { encoding: 'utf8' }).trim());
  const seconds = Number(execFileSync('sox', ['--i', '-D', file], { encoding: 'utf8' }).trim());
  // sox writes its stat to stderr.
  const report = execFileSync('sh', ['-c', 'sox "$0" -n stat 2>&1', file], { encoding: 'utf8' });
  const maximum = Number(/Maximum amplitude:\s+([\d.]+)/.exec(report)?.[1] ?? 0);
  return { channels, seconds, maximum };
}

/** What a call's recording looks like through the API (docs/features/recordings.md#listening). */
export function callRecordings(api: RunningApi, owner: TestWorkspace) {
  const recordingOf = (callId: string, side: TestWorkspace = owner) =>
    api.request('GET', `/calls/${callId}/recording`, { key: side.key });
  return {
    /**
     * GET /calls/{id}/recording streams real audio: a WAV sox decodes, two channels, seconds long, not silent, with
     * nothing of the connection's `secret` (its auth token, its API key) in it.
     */
    async expectAudible(callId: string, secret: string) {
      const heard = await recordingOf(callId);
      expect(heard.status).toBe(200);
      expect(heard.headers.get('content-type')).toMatch(/^audio\/(x-)?wav/);
      const audio = new Uint8Array(await heard.arrayBuffer());
      const info = soxInfo(audio);
      expect(info.channels).toBe(2);
      expect(info.seconds).toBeGreaterThan(2);
      expect(info.maximum).toBeGreaterThan(0.05);
      expect(Buffer.from(audio).includes(Buffer.from(secret))).toBe(false);
    },
    /** GET /calls/{id}/recording with `side`'s key (the owner's unless given). */
    recordingOf,
    /** GET /calls/{id}: its `recording`. */
    callDetail: async (callId: string) =>
      (await (await api.request('GET', `/calls/${callId}`, { key: owner.key })).json()) as {
        recording: {
          status: string;
          durationSec: number | null;
          channels: number | null;
          deletedAt: string | null;
        } | null;
      },
  };
}
