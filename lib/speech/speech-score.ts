import type { Scorecard } from './scorecard';
import type { TranscribedWord } from './transcriber';
import { normaliseWords } from './words';

/** A gap between words shorter than this is part of talking (a breath, a comma); from this length on it is silence. */
export const PAUSE_MS = 500;

export interface TermHit {
  /** The keyword or phrase as the scorecard gives it. */
  term: string;
  /** How many times its words occur in a row in the transcript (occurrences may overlap). */
  count: number;
  /** When the first occurrence starts, or null when it never occurs. */
  firstAtMs: number | null;
}

export type ScoreMeasure = 'keywords' | 'phrases' | 'speakingRate' | 'longestSilence';

export interface ScoreReason {
  measure: ScoreMeasure;
  /** Points earned, out of `maxPoints`; the total is the sum of all points, rounded. */
  points: number;
  maxPoints: number;
  detail: string;
}

export interface SpeechScore {
  durationMs: number;
  wordCount: number;
  talkTimeMs: number;
  /** talkTimeMs / durationMs. */
  talkRatio: number;
  /** Words per minute of talk time (0 without words). */
  speakingRateWpm: number;
  longestSilenceMs: number;
  /** Where the longest silence starts (0 when it opens the recording). */
  longestSilenceStartMs: number;
  keywords: TermHit[];
  phrases: TermHit[];
  /** 0-100. */
  total: number;
  reasons: ScoreReason[];
}

const round1 = (value: number) => Math.round(value * 10) / 10;

/** Talk time and the longest silence: words closer than PAUSE_MS form one stretch of talk; the rest is silence. */
function talkAndSilence(words: readonly TranscribedWord[], durationMs: number) {
  let talkTimeMs = 0;
  let longest = { ms: 0, startMs: 0 };
  let stretchStart: number | null = null;
  let previousEnd = 0;
  const silence = (startMs: number, endMs: number) => {
    if (endMs - startMs > longest.ms) longest = { ms: endMs - startMs, startMs };
  };
  for (const word of words) {
    if (stretchStart === null) {
      silence(0, word.startMs);
      stretchStart = word.startMs;
    } else if (word.startMs - previousEnd >= PAUSE_MS) {
      talkTimeMs += previousEnd - stretchStart;
      silence(previousEnd, word.startMs);
      stretchStart = word.startMs;
    }
    previousEnd = Math.max(previousEnd, word.endMs);
  }
  if (stretchStart !== null) talkTimeMs += previousEnd - stretchStart;
  silence(stretchStart === null ? 0 : previousEnd, Math.max(durationMs, previousEnd));
  return { talkTimeMs, longestSilenceMs: longest.ms, longestSilenceStartMs: longest.startMs };
}

/** Each term's occurrences as a run of the transcript's words (both normalised with normaliseWords). */
function findTerms(terms: readonly string[], words: readonly TranscribedWord[]): TermHit[] {
  const spoken = words.flatMap(({ word, startMs }) => normaliseWords(word).map((token) => ({ token, startMs })));
  return [...new Set(terms)].map((term) => {
    const wanted = normaliseWords(term);
    let count = 0;
    let firstAtMs: number | null = null;
    for (let start = 0; start + wanted.length <= spoken.length; start++) {
      if (wanted.every((token, offset) => spoken[start + offset]!.token === token)) {
        count++;
        firstAtMs ??= spoken[start]!.startMs;
      }
    }
    return { term, count, firstAtMs };
  });
}

/** 1 inside [min, max]; below, rate / min; above, falling linearly to 0 at twice max. */
function rateFraction(wpm: number, min: number, max: number): number {
  if (wpm < min) return min === 0 ? 1 : wpm / min;
  if (wpm > max) return max === 0 ? 0 : Math.max(0, 1 - (wpm - max) / max);
  return 1;
}

/** 1 up to the limit; above, falling linearly to 0 at three times the limit. */
const silenceFraction = (ms: number, limit: number) => (ms <= limit ? 1 : Math.max(0, 1 - (ms - limit) / (2 * limit)));

/**
 * The measures of one recording's transcript against a scorecard, and its total score with the reasons
 * (every measure is defined in docs/features/speech.md).
 */
export function scoreSpeech(words: readonly TranscribedWord[], durationMs: number, scorecard: Scorecard): SpeechScore {
  const { talkTimeMs, longestSilenceMs, longestSilenceStartMs } = talkAndSilence(words, durationMs);
  const speakingRateWpm = talkTimeMs > 0 ? round1((words.length * 60_000) / talkTimeMs) : 0;
  const keywords = findTerms(scorecard.keywords, words);
  const phrases = findTerms(scorecard.phrases, words);
  const { targets, weights } = scorecard;
  const hitShare = (hits: TermHit[]) => hits.filter((hit) => hit.count > 0).length / hits.length;
  const missing = (hits: TermHit[]) => hits.filter((hit) => hit.count === 0).map((hit) => `"${hit.term}"`);
  const termDetail = (hits: TermHit[], noun: string) =>
    `${hits.length - missing(hits).length} of ${hits.length} ${noun} said` +
    (missing(hits).length ? `; missing ${missing(hits).join(', ')}` : '');

  // A measure with nothing to check (no keywords, no phrases) is left out; the others share its weight.
  const measures: { measure: ScoreMeasure; weight: number; fraction: number; detail: string }[] = [];
  if (keywords.length)
    measures.push({
      measure: 'keywords',
      weight: weights.keywords,
      fraction: hitShare(keywords),
      detail: termDetail(keywords, 'keywords'),
    });
  if (phrases.length)
    measures.push({
      measure: 'phrases',
      weight: weights.phrases,
      fraction: hitShare(phrases),
      detail: termDetail(phrases, 'phrases'),
    });
  measures.push({
    measure: 'speakingRate',
    weight: weights.speakingRate,
    fraction: rateFraction(speakingRateWpm, targets.minWordsPerMinute, targets.maxWordsPerMinute),
    detail: `${speakingRateWpm} words per minute of talk; target ${targets.minWordsPerMinute}-${targets.maxWordsPerMinute}`,
  });
  measures.push({
    measure: 'longestSilence',
    weight: weights.longestSilence,
    fraction: silenceFraction(longestSilenceMs, targets.maxSilenceMs),
    detail: `longest silence ${longestSilenceMs} ms; target at most ${targets.maxSilenceMs} ms`,
  });
  const weightSum = measures.reduce((sum, { weight }) => sum + weight, 0);
  const reasons = measures.map(({ measure, weight, fraction, detail }) => {
    const maxPoints = weightSum > 0 ? (100 * weight) / weightSum : 0;
    return { measure, points: round1(maxPoints * fraction), maxPoints: round1(maxPoints), detail };
  });
  const total = Math.round(
    measures.reduce(
      (sum, { weight, fraction }) => sum + (weightSum > 0 ? (100 * weight * fraction) / weightSum : 0),
      0,
    ),
  );
  return {
    durationMs,
    wordCount: words.length,
    talkTimeMs,
    talkRatio: durationMs > 0 ? Math.round((talkTimeMs / durationMs) * 1000) / 1000 : 0,
    speakingRateWpm,
    longestSilenceMs,
    longestSilenceStartMs,
    keywords,
    phrases,
    total,
    reasons,
  };
}
