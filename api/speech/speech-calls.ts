import { randomUUID } from 'node:crypto';
import { ZodError } from 'zod';
import type { Prisma } from '../../generated/prisma/client';
import { configVariables, defaultSpeechTaskQueue } from '../../lib/config';
import { voidHold } from '../../lib/credits/holds';
import { prismaCreditStore } from '../../lib/credits/ledger-store';
import { holdSpeechAnalysis, speechAnalysisHoldKey } from '../../lib/credits/speech-billing';
import { ErrorCode } from '../../lib/error-codes';
import { BASE64_IN_JSON_BODY } from '../../lib/base64-body-limits';
import { prismaSql } from '../../lib/run-sql';
import { SPEECH_DECODE_TIMEOUT_MS, SPEECH_LIMITS } from '../../lib/speech/limits';
import { measureRecordingUpload } from '../../lib/speech/measure-upload';
import { POCKETSPHINX_LANGUAGES } from '../../lib/speech/pocketsphinx';
import type { SpeechAnalysisInput } from '../../lib/speech/speech-analysis';
import { SpeechFailure } from '../../lib/speech/speech-failure';
import { startSpeechAnalysis } from '../../lib/temporal/speech';
import { speechAnalysisWorkflowId } from '../../lib/temporal/workflow-ids';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import { paymentRequired } from '../credits/credits';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { scorecardOf } from './speech-people';

/** What an upload may be: the audio a JSON body carries, playing at most the engine's longest. */
export const SPEECH_UPLOAD_LIMITS = { ...BASE64_IN_JSON_BODY, maxSecs: SPEECH_LIMITS.maxSecs } as const;

/** The languages analyses are taken in: the embedded recogniser's. */
export const SPEECH_LANGUAGES = POCKETSPHINX_LANGUAGES;

export interface SpeechUpload {
  /** The recording's bytes (the body's base64 decoded). */
  audio: Buffer;
  repId?: string | undefined;
  title?: string | undefined;
  language: string;
}

const SUMMARY_SELECT = {
  id: true,
  repId: true,
  title: true,
  language: true,
  status: true,
  mediaType: true,
  byteSize: true,
  durationMs: true,
  totalScore: true,
  errorCode: true,
  createdAt: true,
  completedAt: true,
} as const;

type SummaryRow = Prisma.SpeechCallGetPayload<{ select: typeof SUMMARY_SELECT }>;

const summaryOf = (row: SummaryRow) => ({
  ...row,
  createdAt: row.createdAt.toISOString(),
  completedAt: row.completedAt?.toISOString() ?? null,
});

const invalid = (path: string, message: string, input: unknown) =>
  new ZodError([{ code: 'custom', path: [path], message, input }]);

const soxOf = (services: AppServices) =>
  services.speech?.sox ?? {
    soxPath: configVariables.pick({ SOX_PATH: true }).parse(process.env).SOX_PATH,
    timeoutMs: SPEECH_DECODE_TIMEOUT_MS,
  };

const speechTaskQueueOf = (services: AppServices) =>
  services.speech?.taskQueue ?? defaultSpeechTaskQueue(services.taskQueue);

/** A refusal of the recording by the engine, as the API answers it. */
function refusal(error: unknown): unknown {
  if (!(error instanceof SpeechFailure)) return error;
  // What sox said (`cause`) names the server's temporary files: the caller gets the refusal in words.
  const { cause: _cause, ...details } = error.details;
  return new Refusal(error.code, { detail: error.message, ...details });
}

/**
 * Takes a recording for analysis (docs/features/speech.md): the language must be one the recogniser has
 * (422 speech_language_unsupported), the rep one of the workspace's (400 at repId), and the recording
 * audio that decodes whole within the limits (422 recording_not_audio, recording_too_long). Then, in one
 * transaction, the analysis and its recording are recorded and the price of one analysis held (402
 * insufficient_credits: nothing recorded); then its workflow starts. A refused upload is never charged.
 * An Idempotency-Key answers the analysis first uploaded with it (deduplicated) and uploads nothing.
 */
export async function uploadSpeechCall(
  services: AppServices,
  principal: Principal,
  upload: SpeechUpload,
  idempotencyKey: string | undefined,
) {
  const { db, temporal } = services;
  const { workspaceId } = principal;
  if (idempotencyKey !== undefined) {
    const earlier = await db.speechCall.findUnique({
      where: { workspaceId_idempotencyKey: { workspaceId, idempotencyKey } },
      select: SUMMARY_SELECT,
    });
    if (earlier) return { analysis: summaryOf(earlier), deduplicated: true };
  }
  if (!SPEECH_LANGUAGES.some((tag) => tag.toLowerCase() === upload.language.toLowerCase()))
    throw new Refusal(ErrorCode.speech_language_unsupported, {
      detail: `no recogniser for ${upload.language}`,
      language: upload.language,
      supported: [...SPEECH_LANGUAGES],
    });
  if (upload.repId !== undefined) {
    const rep = await db.speechRep.findFirst({ where: { id: upload.repId, workspaceId }, select: { id: true } });
    if (!rep) throw invalid('repId', 'no rep of this workspace has this id (GET /speech/reps)', upload.repId);
  }
  const measured = await measureRecordingUpload(upload.audio, {
    sox: soxOf(services),
    limits: { maxBytes: SPEECH_UPLOAD_LIMITS.maxBytes, maxSecs: SPEECH_UPLOAD_LIMITS.maxSecs },
  }).catch((error: unknown) => {
    throw refusal(error);
  });
  const scorecard = await scorecardOf(db, workspaceId);
  const id = randomUUID();
  const workflowId = speechAnalysisWorkflowId(id);
  const recorded = await db
    .$transaction(async (tx) => {
      const rows = await tx.speechCall.createMany({
        data: [
          {
            id,
            workspaceId,
            repId: upload.repId ?? null,
            title: upload.title ?? null,
            language: upload.language,
            mediaType: measured.mediaType,
            byteSize: upload.audio.length,
            durationMs: measured.durationMs,
            scorecard: scorecard as unknown as Prisma.InputJsonValue,
            workflowId,
            idempotencyKey: idempotencyKey ?? null,
            uploadedByKeyId: principal.keyId ?? null,
          },
        ],
        skipDuplicates: true,
      });
      if (rows.count === 0) {
        // The same key, concurrently: the other request recorded the analysis.
        const other = await tx.speechCall.findUniqueOrThrow({
          where: { workspaceId_idempotencyKey: { workspaceId, idempotencyKey: idempotencyKey! } },
          select: SUMMARY_SELECT,
        });
        return { row: other, deduplicated: true };
      }
      await tx.speechRecording.create({ data: { speechCallId: id, audio: new Uint8Array(upload.audio) } });
      // Billed per analysis (docs/features/credits.md): held with the upload; a balance short of the price
      // refuses it (402).
      await holdSpeechAnalysis(
        prismaSql(tx),
        { workspaceId, speechCallId: id },
        { type: 'api_key', id: principal.keyId },
      );
      const row = await tx.speechCall.findUniqueOrThrow({ where: { id }, select: SUMMARY_SELECT });
      return { row, deduplicated: false };
    })
    .catch((error: unknown) => {
      throw paymentRequired(error);
    });
  if (recorded.deduplicated) return { analysis: summaryOf(recorded.row), deduplicated: true };
  try {
    const input: SpeechAnalysisInput = { speechCallId: id, workspaceId, taskQueue: speechTaskQueueOf(services) };
    // Already started is no failure (lib/temporal/speech.ts).
    await startSpeechAnalysis(temporal, services.taskQueue, workflowId, input);
  } catch (error) {
    // Never started: withdrawn, so no analysis waits for a workflow that does not exist, and its hold
    // goes back (should that fail too, the sweep of abandoned holds voids it).
    await db.speechCall.deleteMany({ where: { id, status: 'queued' } });
    await voidHold(prismaCreditStore(db), {
      workspaceId,
      idempotencyKey: speechAnalysisHoldKey(id),
      actor: { type: 'api_key', id: principal.keyId },
    }).catch(() => {});
    throw error;
  }
  return { analysis: summaryOf(recorded.row), deduplicated: false };
}

export interface SpeechCallQuery {
  limit: number;
  offset: number;
  repId?: string | undefined;
  teamId?: string | undefined;
  status?: 'queued' | 'processing' | 'completed' | 'failed' | undefined;
}

/** The workspace's analyses, newest first (createdAt, then id), by offset, with the total matching the filters. */
export async function listSpeechCalls(services: AppServices, principal: Principal, query: SpeechCallQuery) {
  const where: Prisma.SpeechCallWhereInput = {
    workspaceId: principal.workspaceId,
    ...(query.repId !== undefined && { repId: query.repId }),
    ...(query.teamId !== undefined && { rep: { teamId: query.teamId } }),
    ...(query.status !== undefined && { status: query.status }),
  };
  const [rows, total] = await services.db.$transaction([
    services.db.speechCall.findMany({
      where,
      select: SUMMARY_SELECT,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: query.offset,
      take: query.limit,
    }),
    services.db.speechCall.count({ where }),
  ]);
  return { items: rows.map(summaryOf), total };
}

/** One analysis with its transcript, scores and the scorecard it was scored against; another workspace's: 403. */
export async function getSpeechCall(services: AppServices, principal: Principal, id: string) {
  const row = await findOwned(principal, id, (where) =>
    services.db.speechCall.findFirst({
      where,
      select: { ...SUMMARY_SELECT, scorecard: true, transcript: true, score: true, engine: true, errorMessage: true },
    }),
  );
  const { scorecard, transcript, score, engine, errorMessage, ...summary } = row;
  return { ...summaryOf(summary), errorMessage, engine, scorecard, transcript, score };
}

/**
 * Deletes an analysis and its recording. One still queued or processing is 409
 * speech_analysis_in_progress: its workflow is billing it; delete it once it completed or failed. What
 * the ledger says of it stays (entries are never deleted).
 */
export async function deleteSpeechCall(services: AppServices, principal: Principal, id: string) {
  const row = await findOwned(principal, id, (where) =>
    services.db.speechCall.findFirst({ where, select: { id: true, status: true } }),
  );
  const deleted = await services.db.speechCall.deleteMany({
    where: { id: row.id, status: { in: ['completed', 'failed'] } },
  });
  if (deleted.count === 0)
    throw new Refusal(ErrorCode.speech_analysis_in_progress, {
      detail: 'the analysis is still running; delete it once it has completed or failed',
    });
}
