import { z } from 'zod';
import { atLeastCodePoints, atMostCodePoints } from '../../lib/code-point-length';
import { ErrorCode } from '../../lib/error-codes';
import { scorecardSchema } from '../../lib/speech/scorecard';
import { offsetQuery } from '../http/pagination';
import { optionalIdempotencyKey } from '../http/idempotency-key';
import { defineRoute } from '../http/route';
import {
  deleteSpeechCall,
  getSpeechCall,
  listSpeechCalls,
  SPEECH_LANGUAGES,
  SPEECH_UPLOAD_LIMITS,
  uploadSpeechCall,
} from './speech-calls';

const tags = ['Speech analysis'];
const STATUSES = ['queued', 'processing', 'completed', 'failed'] as const;

const summarySchema = z.object({
  id: z.string().uuid(),
  repId: z
    .string()
    .uuid()
    .nullable()
    .describe('The rep the recording is of (GET /speech/reps); null: none, or deleted.'),
  title: z.string().nullable(),
  language: z.string().describe('BCP 47 tag of the language spoken.'),
  status: z
    .enum(STATUSES)
    .describe(
      'queued (uploaded, credits held), processing (being transcribed and scored), completed (scored and charged) or failed (nothing charged; errorCode says why).',
    ),
  mediaType: z.enum(['audio/wav', 'audio/mpeg', 'audio/ogg', 'audio/flac']).describe("As told by the file's content."),
  byteSize: z.number().int(),
  durationMs: z.number().int().describe('How long the recording plays, measured by decoding it.'),
  totalScore: z.number().int().nullable().describe('Completed: the total score, 0 to 100 (docs/features/speech.md).'),
  errorCode: z
    .string()
    .nullable()
    .describe(
      'Failed: why, as an error code: recording_not_audio, recording_too_long, speech_language_unsupported, or internal_error (the analysis failed on our side past its retries, or was cancelled).',
    ),
  createdAt: z.string().describe('When it was uploaded (ISO 8601).'),
  completedAt: z.string().nullable().describe('When it completed or failed.'),
});

const termHitSchema = z.object({ term: z.string(), count: z.number().int(), firstAtMs: z.number().int().nullable() });

const analysisSchema = summarySchema.extend({
  errorMessage: z.string().nullable().describe('Failed: why, in words.'),
  engine: z.string().nullable().describe('The recogniser that transcribed it, with its version and model.'),
  scorecard: scorecardSchema.describe(
    'The scorecard in force when the recording was uploaded: what it is scored against.',
  ),
  transcript: z
    .object({
      text: z.string(),
      words: z.array(z.object({ word: z.string(), startMs: z.number().int(), endMs: z.number().int() })),
    })
    .nullable()
    .describe('Completed: the recognised words and when each was said (milliseconds from the start).'),
  score: z
    .object({
      durationMs: z.number(),
      wordCount: z.number().int(),
      talkTimeMs: z.number(),
      talkRatio: z.number(),
      speakingRateWpm: z.number(),
      longestSilenceMs: z.number(),
      longestSilenceStartMs: z.number(),
      keywords: z.array(termHitSchema),
      phrases: z.array(termHitSchema),
      total: z.number().int(),
      reasons: z.array(
        z.object({
          measure: z.enum(['keywords', 'phrases', 'speakingRate', 'longestSilence']),
          points: z.number(),
          maxPoints: z.number(),
          detail: z.string(),
        }),
      ),
    })
    .nullable()
    .describe(
      'Completed: every measure, the keyword and phrase hits, the total and its reasons (docs/features/speech.md).',
    ),
});

const uploadSchema = z.strictObject({
  audio: z
    .base64()
    .min(1)
    .check(atMostCodePoints(SPEECH_UPLOAD_LIMITS.maxBase64Chars))
    .describe(
      `The recording in base64: WAV, MP3, Ogg Vorbis or FLAC (told by its content), at most ${SPEECH_UPLOAD_LIMITS.maxBytes} bytes (${SPEECH_UPLOAD_LIMITS.maxBase64Chars} characters: the body is JSON of at most 1 MB), playing at most ${SPEECH_UPLOAD_LIMITS.maxSecs} s. All of it is decoded before it is taken: what does not decode is 422 recording_not_audio, what plays longer 422 recording_too_long; neither is charged.`,
    ),
  repId: z
    .string()
    .uuid()
    .optional()
    .describe("The rep speaking (GET /speech/reps); another workspace's or unknown: 400."),
  title: z.string().trim().min(1).check(atMostCodePoints(200)).optional(),
  language: z
    .string()
    .check(atLeastCodePoints(2), atMostCodePoints(35))
    .regex(/^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/, 'a BCP 47 language tag')
    .default('en-US')
    .describe(
      `BCP 47 tag of the language spoken; default en-US. The embedded recogniser takes ${SPEECH_LANGUAGES.join(' and ')}; others: 422 speech_language_unsupported.`,
    ),
});

const idParams = z.object({ id: z.string().describe('An analysis id of GET /speech/calls.') });

export const speechCallRoutes = [
  defineRoute({
    method: 'post',
    path: '/speech/calls',
    access: { permission: 'speech.upload' },
    summary:
      "Upload a recording of a sales conversation for analysis: it is decoded whole at once (refusals are 422 and charge nothing), recorded with the price of one analysis held (402 insufficient_credits when the balance does not cover it: nothing recorded), and analysed by a durable job: transcribed by the embedded recogniser and scored against the workspace's scorecard (docs/features/speech.md). 202 with the analysis, queued; GET /speech/calls/{id} reads it as it completes (charged) or fails (hold released). " +
      'An optional Idempotency-Key header makes a retried upload answer the analysis it made (200, deduplicated) instead of making and charging a second.',
    tags,
    body: uploadSchema,
    headerParameters: [
      {
        name: 'Idempotency-Key',
        description:
          'Optional, 1 to 255 characters. The same key in the same workspace never uploads (nor charges) twice: the first analysis is answered (200).',
      },
    ],
    responses: {
      202: {
        description: 'Accepted: the analysis, queued.',
        schema: z.object({ analysis: summarySchema, deduplicated: z.literal(false) }),
      },
      200: {
        description: 'An analysis was uploaded under this Idempotency-Key before: that analysis, as it is now.',
        schema: z.object({ analysis: summarySchema, deduplicated: z.literal(true) }),
      },
    },
    errors: {
      402: [ErrorCode.insufficient_credits],
      422: [ErrorCode.recording_not_audio, ErrorCode.recording_too_long, ErrorCode.speech_language_unsupported],
      503: [ErrorCode.temporal_unavailable],
    },
    handler: async ({ services, principal, body, req }) => {
      const idempotencyKey = optionalIdempotencyKey(req);
      const audio = Buffer.from(body.audio, 'base64');
      const uploaded = await uploadSpeechCall(services, principal, { ...body, audio }, idempotencyKey);
      return { status: uploaded.deduplicated ? 200 : 202, body: uploaded };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/speech/calls',
    access: { permission: 'speech.view' },
    summary:
      "The workspace's analyses, newest first, by offset (limit default 50, max 200; offset); total counts every analysis matching the filters. Filters: repId, teamId (the rep's team as it is now), status.",
    tags,
    query: z.object({
      ...offsetQuery,
      repId: z.string().uuid().optional().describe('Only analyses of this rep.'),
      teamId: z.string().uuid().optional().describe('Only analyses of reps now in this team.'),
      status: z.enum(STATUSES).optional(),
    }),
    responses: {
      200: {
        description: 'One page.',
        schema: z.object({ items: z.array(summarySchema), total: z.number().int() }),
      },
    },
    handler: async ({ services, principal, query }) => ({
      status: 200,
      body: await listSpeechCalls(services, principal, query),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/speech/calls/{id}',
    access: { permission: 'speech.view' },
    summary: 'One analysis with its transcript, its scores and the scorecard it was scored against.',
    tags,
    params: idParams,
    responses: { 200: { description: 'The analysis.', schema: analysisSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await getSpeechCall(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/speech/calls/{id}',
    access: { permission: 'speech.delete' },
    summary:
      'Delete an analysis and its recording. One still queued or processing: 409 speech_analysis_in_progress (delete it once it completed or failed). The ledger keeps its entries.',
    tags,
    params: idParams,
    responses: { 204: { description: 'Deleted.' } },
    errors: { 409: [ErrorCode.speech_analysis_in_progress] },
    handler: async ({ services, principal, params }) => {
      await deleteSpeechCall(services, principal, params.id);
      return { status: 204 };
    },
  }),
];
