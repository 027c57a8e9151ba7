import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SoxOptions } from '../background-audio/sox';
import type { SpeechLimits } from './limits';
import { normaliseRecording } from './normalise-recording';
import type { Scorecard } from './scorecard';
import { scoreSpeech, type SpeechScore } from './speech-score';
import type { Transcriber, Transcription } from './transcriber';

export interface AnalyseRecordingOptions {
  sox: SoxOptions;
  transcriber: Transcriber;
  scorecard: Scorecard;
  language: string;
  limits?: SpeechLimits;
  /** sox's name of the input format; by default sox picks it from the file's name, then its first bytes. */
  type?: string;
  signal?: AbortSignal;
}

export interface RecordingAnalysis {
  durationMs: number;
  bytes: number;
  transcription: Transcription;
  score: SpeechScore;
}

/**
 * One recording, start to end: decoded and normalised by sox (in a temporary folder, removed after), transcribed,
 * scored. Refusals of the recording are SpeechFailures (lib/speech/speech-failure.ts).
 */
export async function analyseRecording(
  inputPath: string,
  options: AnalyseRecordingOptions,
): Promise<RecordingAnalysis> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'speech-'));
  try {
    const { wavPath, durationMs, bytes } = await normaliseRecording(inputPath, path.join(dir, 'normalised.wav'), {
      sox: options.sox,
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.type ? { type: options.type } : {}),
    });
    const transcription = await options.transcriber.transcribe(wavPath, {
      language: options.language,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return { durationMs, bytes, transcription, score: scoreSpeech(transcription.words, durationMs, options.scorecard) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
