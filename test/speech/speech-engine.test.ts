// The speech-analysis engine (lib/speech) on the real binaries: sox decodes and normalises, pocketsphinx
// transcribes an espeak-ng recording of a known sales call, the scorecard scores it. No database.
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../lib/error-codes';
import { analyseRecording, type RecordingAnalysis } from '../../lib/speech/analyse-recording';
import { normaliseRecording } from '../../lib/speech/normalise-recording';
import { PocketsphinxError, PocketsphinxTranscriber } from '../../lib/speech/pocketsphinx';
import { findDebianPocketsphinxModel } from '../../lib/speech/pocketsphinx-model';
import { parsePocketsphinxWords } from '../../lib/speech/pocketsphinx-output';
import { scorecardSchema } from '../../lib/speech/scorecard';
import { SpeechFailure } from '../../lib/speech/speech-failure';
import { scoreSpeech } from '../../lib/speech/speech-score';
import type { TranscribedWord } from '../../lib/speech/transcriber';
import { wordErrorRate } from '../../lib/speech/word-error-rate';
import { normaliseWords } from '../../lib/speech/words';
import {
  makeSalesCallRecording,
  SILENCE_BEFORE_TURN,
  SILENCE_SECS,
  type MadeRecording,
} from '../support/sales-conversation';
import { execTestProcess } from '../support/processes';

const run = execTestProcess;
const SOX = { soxPath: 'sox', timeoutMs: 30_000 };
const dir = mkdtempSync(path.join(os.tmpdir(), 'speech-engine-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The refusal a promise ends in, or a failure of the test when it does not refuse with a SpeechFailure. */
async function refusal(promise: Promise<unknown>): Promise<SpeechFailure> {
  const outcome = await promise.then(
    () => new Error('expected a SpeechFailure, got a result'),
    (error: unknown) => error,
  );
  if (!(outcome instanceof SpeechFailure)) throw outcome;
  return outcome;
}

// Measured on this machine's Debian packages (pocketsphinx 0.8+5prealpha+1-15, pocketsphinx-en-us): see
// docs/features/speech.md. The bound leaves margin over what was measured; a broken pipeline is far above it.
const WER_BOUND = 0.65;

// The scorecard of the sales call: terms of the script, and terms it never says.
const SCORECARD = scorecardSchema.parse({
  keywords: ['solar', 'panels', 'installation', 'price', 'dollars', 'email', 'warranty', 'contract'],
  phrases: ['free installation', 'no money down', 'thank you for your time', 'money back guarantee'],
});
const ABSENT = ['warranty', 'contract', 'money back guarantee'];

let recording: MadeRecording;
let analysis: RecordingAnalysis;
beforeAll(async () => {
  recording = await makeSalesCallRecording(dir);
  analysis = await analyseRecording(recording.wavPath, {
    sox: SOX,
    transcriber: new PocketsphinxTranscriber(),
    scorecard: SCORECARD,
    language: 'en-US',
  });
}, 240_000);

describe('decoding and normalising with sox', () => {
  it('turns a WAV and an MP3 into 16 kHz mono 16-bit WAV of the same length', async () => {
    const mp3 = path.join(dir, 'sales-call.mp3');
    await run('lame', ['--quiet', '-V', '6', recording.wavPath, mp3]);
    for (const input of [recording.wavPath, mp3]) {
      const output = path.join(dir, `normalised-${path.basename(input)}.wav`);
      const normalised = await normaliseRecording(input, output, { sox: SOX });
      const { stdout } = await run('sox', ['--i', output]);
      expect(stdout).toMatch(/Channels\s*: 1\n/);
      expect(stdout).toMatch(/Sample Rate\s*: 16000\n/);
      expect(stdout).toMatch(/Precision\s*: 16-bit\n/);
      expect(stdout).toMatch(/Sample Encoding: 16-bit Signed Integer PCM/);
      expect(normalised.bytes).toBe(statSync(input).size);
      // MP3 adds an encoder delay and padding of a few tens of milliseconds.
      expect(Math.abs(normalised.durationMs - recording.durationMs)).toBeLessThan(100);
    }
  });

  it('refuses a file that does not decode as audio: text, random bytes, a WAV without samples', async () => {
    const text = path.join(dir, 'notes.wav');
    writeFileSync(text, 'Call notes: the customer wants a quote.\n');
    const noise = path.join(dir, 'upload.mp3');
    writeFileSync(noise, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)));
    const empty = path.join(dir, 'empty.wav');
    await run('sox', ['-n', '-r', '16000', '-c', '1', '-b', '16', empty, 'trim', '0', '0']);
    for (const input of [text, noise, empty]) {
      const output = path.join(dir, `refused-${path.basename(input)}`);
      const failure = await refusal(normaliseRecording(input, output, { sox: SOX }));
      expect(failure.code, input).toBe(ErrorCode.recording_not_audio);
    }
    // Named as audio of another format, the text is still not audio.
    const failure = await refusal(normaliseRecording(text, path.join(dir, 'x.wav'), { sox: SOX, type: 'mp3' }));
    expect(failure.code).toBe(ErrorCode.recording_not_audio);
  });

  it('refuses a file over the size limit before decoding it', async () => {
    const bytes = statSync(recording.wavPath).size;
    const output = path.join(dir, 'too-large.wav');
    const failure = await refusal(
      normaliseRecording(recording.wavPath, output, { sox: SOX, limits: { maxBytes: bytes - 1, maxSecs: 1200 } }),
    );
    expect(failure.code).toBe(ErrorCode.recording_too_large);
    expect(failure.details).toEqual({ bytes, maxBytes: bytes - 1 });
    expect(existsSync(output)).toBe(false);
    // At the limit it is taken.
    await normaliseRecording(recording.wavPath, output, { sox: SOX, limits: { maxBytes: bytes, maxSecs: 1200 } });
  });

  it('refuses audio over the length limit, and takes it at the limit', async () => {
    const seconds = Math.floor(recording.durationMs / 1000);
    const output = path.join(dir, 'too-long.wav');
    const failure = await refusal(
      normaliseRecording(recording.wavPath, output, { sox: SOX, limits: { maxBytes: 1e9, maxSecs: seconds } }),
    );
    expect(failure.code).toBe(ErrorCode.recording_too_long);
    expect(failure.details).toEqual({ maxSecs: seconds });
    const taken = await normaliseRecording(recording.wavPath, output, {
      sox: SOX,
      limits: { maxBytes: 1e9, maxSecs: seconds + 1 },
    });
    expect(taken.durationMs).toBe(recording.durationMs);
  });

  it('refuses through analyseRecording too, without running the recogniser', async () => {
    const text = path.join(dir, 'call.ogg');
    writeFileSync(text, 'not audio at all');
    const transcriber = new PocketsphinxTranscriber({ program: path.join(dir, 'no-such-recogniser') });
    const failure = await refusal(
      analyseRecording(text, { sox: SOX, transcriber, scorecard: SCORECARD, language: 'en-US' }),
    );
    expect(failure.code).toBe(ErrorCode.recording_not_audio);
  });
});

describe('pocketsphinx on the espeak-ng sales call', () => {
  it('uses the US English model of Debian’s pocketsphinx-en-us, found through its file list', async () => {
    const model = await findDebianPocketsphinxModel();
    expect(model).not.toBeNull();
    expect(existsSync(path.join(model!.hmm, 'mdef'))).toBe(true);
    expect(path.basename(model!.lm)).toBe(`${path.basename(model!.hmm)}.lm.bin`);
    expect(model!.dict).toMatch(/\.dict$/);
    expect(analysis.transcription.engine).toMatch(/^pocketsphinx \S+ \(pocketsphinx-en-us \S+\)$/);
  });

  it(`transcribes it with a word error rate under ${WER_BOUND}`, () => {
    const { text, words } = analysis.transcription;
    const measured = wordErrorRate(recording.script, text);
    console.log(`speech-engine: WER ${measured.wer.toFixed(3)}`, measured, `\n${text}`);
    expect(measured.wer).toBeLessThan(WER_BOUND);
    expect(text).toBe(words.map(({ word }) => word).join(' '));
    // Word timings lie in the recording, in order, each word inside one of the script's turns (100 ms of slack).
    for (const [index, word] of words.entries()) {
      expect(word.endMs).toBeGreaterThan(word.startMs);
      if (index > 0) expect(word.startMs).toBeGreaterThanOrEqual(words[index - 1]!.endMs);
      const inTurn = recording.turns.some(
        (turn) => word.startMs >= turn.startMs - 100 && word.endMs <= turn.endMs + 100,
      );
      expect(inTurn, `${word.word} at ${word.startMs}-${word.endMs} ms`).toBe(true);
    }
  });

  it('finds the long silence where the script has it, and measures talk time and speaking rate', () => {
    const { score } = analysis;
    const { talkTimeMs, talkRatio, wordCount, speakingRateWpm, longestSilenceMs, longestSilenceStartMs } = score;
    console.log('speech-engine: measures', {
      talkTimeMs,
      talkRatio,
      wordCount,
      speakingRateWpm,
      longestSilenceMs,
      longestSilenceStartMs,
      total: score.total,
    });
    const before = recording.turns[SILENCE_BEFORE_TURN - 1]!;
    const after = recording.turns[SILENCE_BEFORE_TURN]!;
    expect(score.durationMs).toBe(recording.durationMs);
    // The gap between the two turns, plus the quiet espeak-ng leaves at the end of a turn.
    expect(score.longestSilenceMs).toBeGreaterThanOrEqual(SILENCE_SECS * 1000);
    expect(score.longestSilenceMs).toBeLessThanOrEqual(after.startMs - before.startMs);
    expect(score.longestSilenceStartMs).toBeGreaterThan(before.startMs);
    expect(score.longestSilenceStartMs).toBeLessThanOrEqual(before.endMs);
    // Talk time: inside the turns (the pauses between them are not talk), and most of them.
    const turnsMs = recording.turns.reduce((sum, turn) => sum + turn.endMs - turn.startMs, 0);
    expect(score.talkTimeMs).toBeLessThanOrEqual(turnsMs);
    expect(score.talkTimeMs).toBeGreaterThan(0.7 * turnsMs);
    expect(score.talkRatio).toBeCloseTo(score.talkTimeMs / score.durationMs, 3);
    expect(score.wordCount).toBe(analysis.transcription.words.length);
    expect(score.speakingRateWpm).toBeCloseTo((score.wordCount * 60_000) / score.talkTimeMs, 1);
    // espeak-ng speaks at 175 words per minute by default; the script has 81 words.
    expect(normaliseWords(recording.script)).toHaveLength(81);
    expect(score.speakingRateWpm).toBeGreaterThan(140);
    expect(score.speakingRateWpm).toBeLessThan(240);
  });

  it('scores the scorecard: the terms of the script that were recognised, none it never says', () => {
    // The script itself, scored as a transcript, says every present term and none of the absent ones.
    const scriptWords: TranscribedWord[] = normaliseWords(recording.script).map((word, index) => ({
      word,
      startMs: index * 300,
      endMs: index * 300 + 250,
    }));
    const ideal = scoreSpeech(scriptWords, scriptWords.length * 300, SCORECARD);
    const counts = (hits: { term: string; count: number }[]) =>
      Object.fromEntries(hits.map(({ term, count }) => [term, count]));
    expect(counts(ideal.keywords)).toEqual({
      solar: 2,
      panels: 1,
      installation: 1,
      price: 1,
      dollars: 1,
      email: 1,
      warranty: 0,
      contract: 0,
    });
    expect(counts(ideal.phrases)).toEqual({
      'free installation': 1,
      'no money down': 1,
      'thank you for your time': 1,
      'money back guarantee': 0,
    });

    const { score } = analysis;
    const heard = [...score.keywords, ...score.phrases];
    for (const hit of heard) {
      if (ABSENT.includes(hit.term)) expect(hit.count, hit.term).toBe(0);
      else expect(hit.count, hit.term).toBeLessThanOrEqual(counts([...ideal.keywords, ...ideal.phrases])[hit.term]!);
      if (hit.count > 0) {
        // Each hit is found at a word said in one of the turns.
        const at = analysis.transcription.words.find((word) => word.startMs === hit.firstAtMs);
        expect(at, hit.term).toBeDefined();
      }
    }
    const recognised = heard.filter((hit) => hit.count > 0).map((hit) => hit.term);
    console.log('speech-engine: terms recognised', recognised, score.reasons);
    expect(recognised.length).toBeGreaterThanOrEqual(MIN_TERMS_RECOGNISED);
    // The total is the sum of the reasons' points, each within its share.
    const points = score.reasons.reduce((sum, reason) => sum + reason.points, 0);
    expect(Math.abs(score.total - points)).toBeLessThanOrEqual(0.5 + 0.05 * score.reasons.length);
    for (const reason of score.reasons) expect(reason.points).toBeLessThanOrEqual(reason.maxPoints);
    expect(score.reasons.map((reason) => reason.maxPoints)).toEqual([40, 30, 15, 15]);
    expect(score.reasons[0]!.detail).toMatch(/^\d of 8 keywords said; missing (".+", )?"warranty", "contract"$/);
  });

  it('refuses a language it has no model for, before running anything', async () => {
    const transcriber = new PocketsphinxTranscriber({ program: path.join(dir, 'no-such-recogniser') });
    const failure = await refusal(transcriber.transcribe(recording.wavPath, { language: 'fr-FR' }));
    expect(failure.code).toBe(ErrorCode.speech_language_unsupported);
    expect(failure.details).toEqual({ language: 'fr-FR', supported: ['en-US', 'en'] });
    // en-US in any case is taken: then the missing program is an error of ours, not a refusal.
    await expect(transcriber.transcribe(recording.wavPath, { language: 'EN-us' })).rejects.toBeInstanceOf(
      PocketsphinxError,
    );
    // A run that fails is an error of ours too, with pocketsphinx's reason.
    const missing = new PocketsphinxTranscriber().transcribe(path.join(dir, 'missing.wav'), { language: 'en-US' });
    await expect(missing).rejects.toThrow(/exited with 1: .*Failed to open file/);
    await expect(missing).rejects.toBeInstanceOf(PocketsphinxError);
  });
});

// Measured: 7 of the script's 9 terms (docs/features/speech.md).
const MIN_TERMS_RECOGNISED = 5;

describe('scoring a transcript', () => {
  const word = (text: string, startMs: number, endMs: number): TranscribedWord => ({ word: text, startMs, endMs });
  // 10 s: "hello" 0.5-1.0, "our" 1.2-1.4 (a 200 ms pause: still talk), "price" 1.4-2.0, silence 2.0-6.0,
  // "free installation" 6.0-7.0, then silence to the end (3 s).
  const words = [
    word('hello', 500, 1000),
    word('our', 1200, 1400),
    word('price', 1400, 2000),
    word('free', 6000, 6400),
    word('installation', 6400, 7000),
  ];

  it('computes every measure as documented', () => {
    const score = scoreSpeech(
      words,
      10_000,
      scorecardSchema.parse({ keywords: ['Price', 'discount'], phrases: ['free installation'] }),
    );
    expect(score).toMatchObject({
      durationMs: 10_000,
      wordCount: 5,
      talkTimeMs: 1500 + 1000,
      talkRatio: 0.25,
      speakingRateWpm: 120,
      longestSilenceMs: 4000,
      longestSilenceStartMs: 2000,
      keywords: [
        { term: 'Price', count: 1, firstAtMs: 1400 },
        { term: 'discount', count: 0, firstAtMs: null },
      ],
      phrases: [{ term: 'free installation', count: 1, firstAtMs: 6000 }],
    });
    // keywords 1/2 of 40, phrases 30 of 30, rate 120 wpm inside 110-170: 15, silence 4000 ms over 3000: 1 - 1000/6000.
    expect(score.reasons.map(({ measure, points, maxPoints }) => [measure, points, maxPoints])).toEqual([
      ['keywords', 20, 40],
      ['phrases', 30, 30],
      ['speakingRate', 15, 15],
      ['longestSilence', 12.5, 15],
    ]);
    expect(score.total).toBe(78);
  });

  it('leaves out a measure with nothing to check, and scores no speech at all', () => {
    const noTerms = scoreSpeech(words, 10_000, scorecardSchema.parse({}));
    expect(noTerms.reasons.map(({ measure, maxPoints }) => [measure, maxPoints])).toEqual([
      ['speakingRate', 50],
      ['longestSilence', 50],
    ]);
    expect(noTerms.total).toBe(Math.round(50 + 50 * (1 - 1000 / 6000)));
    const silent = scoreSpeech([], 4000, scorecardSchema.parse({ keywords: ['price'] }));
    expect(silent).toMatchObject({ talkTimeMs: 0, speakingRateWpm: 0, longestSilenceMs: 4000, total: 18 });
    // keywords 0 of 40, rate 0 of 15, silence 4000 ms: 15/70 of 100 points times 5/6 = 17.9.
  });

  it('reads pocketsphinx’s word timings, leaving fillers out', () => {
    const output = ['hello there', '<s> 0.000 0.020 0.99', 'hello 0.030 0.400 0.5', '<sil> 0.410 0.600 1.0'];
    output.push('[NOISE] 0.610 0.700 0.1', 'there(2) 0.710 1.000 0.3', '</s> 1.010 1.200 1.0');
    expect(parsePocketsphinxWords(output.join('\n'))).toEqual([word('hello', 30, 410), word('there', 710, 1010)]);
  });
});

describe('word error rate', () => {
  it('counts substitutions, deletions and insertions over normalised words', () => {
    expect(wordErrorRate('Hello, World!', 'hello world')).toMatchObject({ wer: 0, referenceWords: 2 });
    expect(wordErrorRate('the cat sat on the mat', 'the bat sat on mat')).toEqual({
      wer: 2 / 6,
      substitutions: 1,
      deletions: 1,
      insertions: 0,
      referenceWords: 6,
      hypothesisWords: 5,
    });
    expect(wordErrorRate('hello world', 'hello big world')).toMatchObject({ insertions: 1, wer: 1 / 2 });
    expect(wordErrorRate('a b', 'c d e f').wer).toBe(2);
    expect(wordErrorRate("It's a follow-up", 'its a follow up')).toMatchObject({ substitutions: 1, wer: 1 / 4 });
    expect(() => wordErrorRate('...', 'words')).toThrow(RangeError);
  });
});
