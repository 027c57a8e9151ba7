import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Prisma } from '../../generated/prisma/client';
import type { SoxOptions } from '../../lib/background-audio/sox';
import { detectAudioFormat } from '../../lib/background-audio/uploads';
import { HoldAlreadySettledError } from '../../lib/credits/credit-errors';
import { prismaCreditStore, type CreditActor } from '../../lib/credits/ledger-store';
import { settleSpeechAnalysisHold } from '../../lib/credits/speech-billing';
import type { Database } from '../../lib/database';
import { rowNotFound } from '../../lib/temporal/refusal';
import { analyseRecording } from '../../lib/speech/analyse-recording';
import type { SpeechLimits } from '../../lib/speech/limits';
import { scorecardSchema } from '../../lib/speech/scorecard';
import { SpeechFailure } from '../../lib/speech/speech-failure';
import type { Transcriber } from '../../lib/speech/transcriber';
import type { BoundActivities } from '../bind-activities';

export interface SpeechActivityDependencies {
  db: Database;
  sox: SoxOptions;
  transcriber: Transcriber;
  limits: SpeechLimits;
}

/** The actor of the entries an analysis's workflow writes. */
const SPEECH_BILLING_ACTOR: CreditActor = { type: 'system', id: 'speechAnalysisWorkflow' };

/** While the recogniser runs, the activity says it is alive this often (its heartbeat timeout is longer). */
const HEARTBEAT_EVERY_MS = 5_000;

const notFound = (speechCallId: string) => rowNotFound(`recording analysis ${speechCallId}`);

/*
 * The activities of a recording's analysis (workflows/speech/speech-analysis.ts), run by the speech workers on
 * SPEECH_TASK_QUEUE. The upload is recorded, measured and its hold taken by the API before the workflow
 * starts; these analyse it, store the result, mark a failure and settle the hold, each idempotently.
 */

/**
 * Decodes, transcribes and scores the recording against the scorecard stored with it, and stores the
 * result (completed) in one update. A recording the engine refuses fails for good with the refusal's
 * code as its type; anything else (sox or the recogniser missing or killed) is retried. An analysis
 * already completed answers its score again; a deleted one is not_found.
 */
export async function analyseSpeechCall(
  { db, sox, transcriber, limits }: SpeechActivityDependencies,
  { speechCallId }: { speechCallId: string },
): Promise<{ totalScore: number }> {
  const analysis = await db.speechCall.findUnique({
    where: { id: speechCallId },
    select: { status: true, totalScore: true, language: true, scorecard: true, recording: true },
  });
  if (!analysis || !analysis.recording) throw notFound(speechCallId);
  if (analysis.status === 'completed') return { totalScore: analysis.totalScore! };
  await db.speechCall.updateMany({ where: { id: speechCallId, status: 'queued' }, data: { status: 'processing' } });
  const audio = analysis.recording.audio;
  const format = detectAudioFormat(audio);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'speech-analysis-'));
  const context = Context.current();
  const heartbeat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    const file = path.join(dir, `recording.${format?.soxType ?? 'audio'}`);
    await writeFile(file, audio);
    const result = await analyseRecording(file, {
      sox,
      transcriber,
      limits,
      scorecard: scorecardSchema.parse(analysis.scorecard),
      language: analysis.language,
      ...(format ? { type: format.soxType } : {}),
      signal: context.cancellationSignal,
    });
    const stored = await db.speechCall.updateMany({
      where: { id: speechCallId, status: { in: ['queued', 'processing'] } },
      data: {
        status: 'completed',
        transcript: {
          text: result.transcription.text,
          words: result.transcription.words,
        } as unknown as Prisma.InputJsonValue,
        score: result.score as unknown as Prisma.InputJsonValue,
        totalScore: result.score.total,
        engine: result.transcription.engine,
        durationMs: result.durationMs,
        completedAt: new Date(),
      },
    });
    if (stored.count === 0) {
      // Deleted meanwhile, or marked failed by the sweep of abandoned holds: what is stored stands.
      const now = await db.speechCall.findUnique({ where: { id: speechCallId }, select: { status: true } });
      if (now?.status !== 'completed') throw notFound(speechCallId);
    }
    return { totalScore: result.score.total };
  } catch (error) {
    if (error instanceof SpeechFailure)
      throw ApplicationFailure.create({
        type: error.code,
        message: error.message,
        details: [error.details],
        nonRetryable: true,
      });
    throw error;
  } finally {
    clearInterval(heartbeat);
    await rm(dir, { recursive: true, force: true });
  }
}

/** Marks the analysis failed with why (unless it completed meanwhile). A deleted one: nothing to mark. */
export async function failSpeechCall(
  { db }: Pick<SpeechActivityDependencies, 'db'>,
  failure: { speechCallId: string; errorCode: string; errorMessage: string },
): Promise<void> {
  await db.speechCall.updateMany({
    where: { id: failure.speechCallId, status: { in: ['queued', 'processing'] } },
    data: {
      status: 'failed',
      errorCode: failure.errorCode,
      errorMessage: failure.errorMessage.slice(0, 1000),
      completedAt: new Date(),
    },
  });
}

/**
 * Bills the analysis as it ended (docs/features/credits.md): its hold posted at the price of one analysis when
 * it completed, voided otherwise (failed, or deleted). Idempotent: a retry finds the hold settled and
 * charges nothing more; a hold the sweep of abandoned holds settled meanwhile is left as it is.
 */
export async function billSpeechCall(
  { db }: Pick<SpeechActivityDependencies, 'db'>,
  { speechCallId, workspaceId }: { speechCallId: string; workspaceId: string },
): Promise<void> {
  const analysis = await db.speechCall.findUnique({ where: { id: speechCallId }, select: { status: true } });
  try {
    await settleSpeechAnalysisHold(
      prismaCreditStore(db),
      { workspaceId, speechCallId, completed: analysis?.status === 'completed' },
      SPEECH_BILLING_ACTOR,
    );
  } catch (error) {
    if (!(error instanceof HoldAlreadySettledError)) throw error;
  }
}

/** The speech workers' activities, bound to their dependencies in one place (worker/create-speech-worker.ts). */
export const speechActivities = { analyseSpeechCall, failSpeechCall, billSpeechCall };

export type SpeechActivities = BoundActivities<typeof speechActivities>;
