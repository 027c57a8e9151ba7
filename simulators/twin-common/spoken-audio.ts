import { execFile } from 'node:child_process';

/**
 * A call's audio as a carrier twin records it (docs/features/carriers/twins.md#recordings): what each side said on the
 * call, spoken by the embedded speech engine (the espeak-ng program, run as a process: nothing of the product's voices),
 * each line at the moment the call's log has it, in a WAV of the carrier's telephone rate. Real audio, so that what the
 * product streams decodes to the call's length; not the product's voice nor the person's.
 */

/** Telephone audio: 8 kHz, 16-bit PCM, as Twilio's and Telnyx's WAV recordings are. */
export const SPOKEN_AUDIO_RATE = 8_000;
/** The longest recording a twin makes (longer calls are cut at it): a twin's recordings are held in memory. */
export const MAX_SPOKEN_AUDIO_MS = 30 * 60_000;
/** The most of a line spoken: a tenant's text is said as far as this, so one line's synthesis stays bounded. */
const MAX_LINE_CHARACTERS = 2_000;
const SYNTHESIS_TIMEOUT_MS = 30_000;

export interface SpokenLine {
  /** Ms from the recording's start. */
  atMs: number;
  text: string;
  /** 0: the first channel, 1: the second (a mono recording mixes both). */
  channel: 0 | 1;
  /** A BCP 47 tag (en-US, es-ES): the espeak-ng voice of its language, English when it has none. */
  language?: string | null;
  /** A second speaker sounds apart: espeak-ng's female variant. */
  variant?: 'f3' | null;
}

/** What a twin logs of a call (both twins' logs have these members): who said what, when. */
export interface LoggedLine {
  atMs: number;
  speaker: string;
  kind: string;
  text?: string;
  language?: string | null;
}

/**
 * The lines of a call's log a recording from `startMs` to `endMs` holds: the agent's said lines and the person's speech
 * (or a machine's greeting), each at its moment from the recording's start. Dual: the call's own leg (the person) on
 * the first channel, what the carrier plays (the agent) on the second, as both carriers document theirs.
 */
export function recordedLinesOf(log: readonly LoggedLine[], startMs: number, endMs = Infinity): SpokenLine[] {
  return log
    .filter(
      (entry) =>
        entry.text &&
        entry.atMs >= startMs &&
        entry.atMs < endMs &&
        ((entry.speaker === 'agent' && entry.kind === 'say') ||
          (entry.speaker === 'callee' && (entry.kind === 'speech' || entry.kind === 'greeting'))),
    )
    .map((entry) => ({
      atMs: entry.atMs - startMs,
      text: entry.text!,
      channel: entry.speaker === 'callee' ? 0 : 1,
      language: entry.language ?? null,
      variant: entry.speaker === 'callee' ? 'f3' : null,
    }));
}

/** espeak-ng's voice name for a language tag: its lowercased tag (en-us), or its primary language (es). */
const voiceOf = (language: string | null | undefined, variant: string | null | undefined) =>
  `${(language ?? 'en-us').toLowerCase().replace(/[^a-z-]/g, '') || 'en-us'}${variant ? `+${variant}` : ''}`;

function synthesize(espeakPath: string, text: string, voice: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      espeakPath,
      ['--stdout', '-v', voice, '--', text.slice(0, MAX_LINE_CHARACTERS)],
      { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: SYNTHESIS_TIMEOUT_MS },
      (error, stdout) => (error ? reject(new Error(error.message)) : resolve(stdout)),
    );
  });
}

/** The PCM samples and rate of espeak-ng's WAV (its sizes are left unset on a pipe: the data runs to the end). */
function pcmOf(wav: Buffer): { samples: Int16Array; rate: number } {
  if (wav.length < 44 || wav.toString('ascii', 0, 4) !== 'RIFF') throw new Error('espeak-ng wrote no WAV');
  const rate = wav.readUInt32LE(24);
  let offset = 12;
  while (offset + 8 <= wav.length && wav.toString('ascii', offset, offset + 4) !== 'data')
    offset += 8 + wav.readUInt32LE(offset + 4);
  const start = offset + 8;
  const bytes = (wav.length - start) & ~1;
  const samples = new Int16Array(bytes / 2);
  for (let index = 0; index < samples.length; index++) samples[index] = wav.readInt16LE(start + index * 2);
  return { samples, rate };
}

/** Linear resampling to the telephone rate. */
function resampled({ samples, rate }: { samples: Int16Array; rate: number }): Float32Array {
  const length = Math.floor((samples.length * SPOKEN_AUDIO_RATE) / rate);
  const out = new Float32Array(length);
  for (let index = 0; index < length; index++) {
    const at = (index * rate) / SPOKEN_AUDIO_RATE;
    const before = Math.floor(at);
    const after = Math.min(before + 1, samples.length - 1);
    out[index] = samples[before]! + (samples[after]! - samples[before]!) * (at - before);
  }
  return out;
}

/** A WAV file's 44-byte header of 16-bit PCM. */
function wavHeader(dataBytes: number, channels: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(SPOKEN_AUDIO_RATE, 24);
  header.writeUInt32LE(SPOKEN_AUDIO_RATE * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/**
 * The recording of `durationMs` (at most MAX_SPOKEN_AUDIO_MS) with each line spoken at its moment, on its channel
 * (channels 2) or mixed into one (channels 1); silence between. Lines that overlap are mixed; a line past the end is
 * cut there.
 */
export async function spokenWav(
  lines: readonly SpokenLine[],
  { durationMs, channels, espeakPath = 'espeak-ng' }: { durationMs: number; channels: 1 | 2; espeakPath?: string },
): Promise<Buffer> {
  const frames = Math.ceil((Math.min(Math.max(durationMs, 0), MAX_SPOKEN_AUDIO_MS) * SPOKEN_AUDIO_RATE) / 1_000);
  const tracks = [new Float32Array(frames), new Float32Array(channels === 2 ? frames : 0)];
  for (const line of lines) {
    if (!line.text.trim() || line.atMs >= durationMs) continue;
    const voice = resampled(pcmOf(await synthesize(espeakPath, line.text, voiceOf(line.language, line.variant))));
    const track = tracks[channels === 2 ? line.channel : 0]!;
    const first = Math.max(0, Math.floor((line.atMs * SPOKEN_AUDIO_RATE) / 1_000));
    for (let index = 0; index < voice.length && first + index < frames; index++) track[first + index]! += voice[index]!;
  }
  const data = Buffer.alloc(frames * channels * 2);
  for (let frame = 0; frame < frames; frame++)
    for (let channel = 0; channel < channels; channel++) {
      const sample = Math.max(-32768, Math.min(32767, Math.round(tracks[channel]![frame]!)));
      data.writeInt16LE(sample, (frame * channels + channel) * 2);
    }
  return Buffer.concat([wavHeader(data.length, channels), data]);
}

/** The WAV as MP3 (the lame program, as Twilio serves a recording's .mp3). */
export function mp3Of(wav: Buffer, lamePath = 'lame'): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      lamePath,
      ['--quiet', '-', '-'],
      { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024, timeout: SYNTHESIS_TIMEOUT_MS },
      (error, stdout) => (error ? reject(new Error(error.message)) : resolve(stdout)),
    );
    child.stdin!.end(wav);
  });
}
