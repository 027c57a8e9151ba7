import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** One turn of the scripted call: who speaks (an espeak-ng voice) and what. */
export interface Turn {
  voice: string;
  text: string;
}

const REP = 'en-us';
const CUSTOMER = 'en-us+f3';

/**
 * A short sales call (about 30 s): a rep (espeak-ng's en-us voice) and a customer (en-us+f3), turns
 * separated by PAUSE_SECS of digital silence (sox without dither: the same bytes every run), and one long silence of SILENCE_SECS before `SILENCE_BEFORE_TURN` (the customer
 * thinking about the price).
 */
export const SALES_CALL: readonly Turn[] = [
  { voice: REP, text: 'Hello, this is Sarah from Bright Solar. Is this a good time to talk about your energy bill?' },
  { voice: CUSTOMER, text: 'Yes, I have a few minutes.' },
  {
    voice: REP,
    text: 'Great. Our solar panels can lower your monthly bill by thirty percent, and we offer free installation.',
  },
  { voice: CUSTOMER, text: 'How much does it cost?' },
  { voice: REP, text: 'The price starts at ninety dollars a month, with no money down.' },
  { voice: CUSTOMER, text: 'That sounds interesting. Can you send me more information?' },
  { voice: REP, text: 'Of course. I will email you the details today. Thank you for your time.' },
];
export const PAUSE_SECS = 0.6;
export const SILENCE_SECS = 3.5;
export const SILENCE_BEFORE_TURN = 5;

export const salesCallScript = (turns: readonly Turn[] = SALES_CALL) => turns.map(({ text }) => text).join(' ');

export interface MadeRecording {
  /** The conversation as espeak-ng speaks it (22,050 Hz mono 16-bit WAV). */
  wavPath: string;
  script: string;
  /** Where each turn starts and ends in the recording, in milliseconds. */
  turns: { startMs: number; endMs: number }[];
  durationMs: number;
}

async function seconds(file: string): Promise<number> {
  const { stdout } = await run('sox', ['--i', '-D', file]);
  return Number(stdout.trim());
}

/** Speaks each turn with espeak-ng and joins them with sox into `dir/name`, the pauses made of digital silence. */
export async function makeSalesCallRecording(dir: string, name = 'sales-call.wav'): Promise<MadeRecording> {
  const parts: string[] = [];
  const turns: MadeRecording['turns'] = [];
  let at = 0;
  for (const [index, turn] of SALES_CALL.entries()) {
    const gap = index === 0 ? 0 : index === SILENCE_BEFORE_TURN ? SILENCE_SECS : PAUSE_SECS;
    if (gap > 0) {
      const silence = path.join(dir, `gap-${index}.wav`);
      await run('sox', ['-D', '-n', '-r', '22050', '-c', '1', '-b', '16', silence, 'trim', '0', String(gap)]);
      parts.push(silence);
      at += gap;
    }
    const spoken = path.join(dir, `turn-${index}.wav`);
    await run('espeak-ng', ['-v', turn.voice, '-w', spoken, turn.text]);
    const length = await seconds(spoken);
    turns.push({ startMs: Math.round(at * 1000), endMs: Math.round((at + length) * 1000) });
    parts.push(spoken);
    at += length;
  }
  const wavPath = path.join(dir, name);
  await run('sox', ['-D', ...parts, wavPath]);
  return { wavPath, script: salesCallScript(), turns, durationMs: Math.round((await seconds(wavPath)) * 1000) };
}
