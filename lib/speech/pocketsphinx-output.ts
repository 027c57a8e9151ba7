import type { TranscribedWord } from './transcriber';

/** pocketsphinx's frames are 10 ms (its default `-frate 100`, which the transcriber does not change). */
export const POCKETSPHINX_FRAME_MS = 10;

// With `-time yes`, pocketsphinx_continuous prints each utterance's hypothesis, then one line per segment:
// "word startSecs endSecs posterior", times from the start of the file, endSecs the start of the last frame.
const SEGMENT = /^(\S+) (\d+\.\d+) (\d+\.\d+) (\S+)$/;

/** Silences, sentence marks and noises pocketsphinx reports as segments: `<s>`, `</s>`, `<sil>`, `[NOISE]`, `++UH++`. */
const isFiller = (token: string) => /^(<.*>|\[.*\]|\+\+.*\+\+)$/.test(token);

/**
 * The words of pocketsphinx_continuous's `-time yes` output, in time order, fillers left out and alternate
 * pronunciation marks removed ("years(2)" is "years").
 */
export function parsePocketsphinxWords(stdout: string): TranscribedWord[] {
  const words: TranscribedWord[] = [];
  for (const line of stdout.split('\n')) {
    const match = SEGMENT.exec(line.trim());
    if (!match || isFiller(match[1]!)) continue;
    words.push({
      word: match[1]!.replace(/\(\d+\)$/, ''),
      startMs: Math.round(Number(match[2]) * 1000),
      endMs: Math.round(Number(match[3]) * 1000) + POCKETSPHINX_FRAME_MS,
    });
  }
  return words.sort((a, b) => a.startMs - b.startMs);
}
