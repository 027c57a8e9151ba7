import { z } from 'zod';
import {
  CALL_ISSUE_CATEGORIES,
  CALL_ISSUE_CATEGORY_NAMES,
  CALL_ISSUE_LIMITS,
  CATEGORIES_NEEDING_A_NOTE,
} from '../../lib/calls/issue-categories';
import { atMostCodePoints } from '../../lib/code-point-length';
import { callIntelligenceSchema } from '../../lib/call-intelligence/call-intelligence';
import { transcriptSchema } from '../../lib/calls/transcript';
import { ErrorCode } from '../../lib/error-codes';
import { defineRoute } from '../http/route';
import { getCall, listCallIssues, reportCallIssue } from './calls';
import { workspaceCallSchema } from '../leads/results-routes';

const tags = ['Calls'];
const { noteLength, issuesPerCall } = CALL_ISSUE_LIMITS;
const params = z.object({ id: z.string().describe('A call id of GET /calls.') });

const CATEGORY_LIST = Object.entries(CALL_ISSUE_CATEGORIES)
  .map(([name, meaning]) => `${name}: ${meaning}`)
  .join(' ');

const callIssueSchema = z.object({
  id: z.string().uuid(),
  category: z.enum(CALL_ISSUE_CATEGORY_NAMES).describe(CATEGORY_LIST),
  note: z.string().describe('As sent; "" when none was given.'),
  reportedBy: z
    .object({
      keyId: z.string().nullable().describe('The API key that reported it; null when it was not reported with a key.'),
      memberId: z.string().describe('The member that key acts for.'),
    })
    .describe('Who reported it.'),
  createdAt: z.string(),
});

const functionCallSchema = z.object({
  id: z.string().uuid(),
  functionId: z.string().uuid(),
  name: z.string().describe("The function's name when it was called."),
  toolCallId: z.string().describe("The model's tool-call id, or the script step that called it."),
  idempotencyKey: z.string().describe('The Idempotency-Key (and webhook-id) header the endpoint received.'),
  arguments: z.record(z.string(), z.unknown()).describe("The model's arguments as sent (never the presets)."),
  status: z
    .enum(['sending', 'ok', 'http_error', 'timed_out', 'refused', 'too_large', 'unknown'])
    .describe(
      'ok: answered 2xx; http_error: answered another status; timed_out: no answer within the timeout (the outcome is unknown to the product too); refused: not reachable (the egress guard refuses private addresses) or the connection broke; too_large: an answer over 64 KiB; sending: no answer recorded yet; unknown: the process stopped before one was.',
    ),
  httpStatus: z.number().int().nullable(),
  durationMs: z.number().int().nullable(),
  resultBytes: z
    .number()
    .int()
    .nullable()
    .describe("Bytes of the endpoint's answer (the model is given at most 2,000 characters of it)."),
  createdAt: z.string(),
});

const callDetailSchema = workspaceCallSchema.extend({
  carrierStatus: z
    .string()
    .nullable()
    .describe(
      "The carrier's last reported state (queued, ringing, in-progress, completed, busy, no-answer, failed, canceled); null for a call placed on the synchronous path.",
    ),
  answeredBy: z
    .string()
    .nullable()
    .describe("human or machine (the carrier's answering-machine detection); null when the carrier did not say."),
  fromNumber: z.string().nullable().describe('The caller number the call was placed from; null when not recorded.'),
  agentId: z.string().nullable().describe('The agent the call was placed with; null when none was.'),
  transcript: transcriptSchema
    .nullable()
    .describe('The turns of an answered call, in order; null when the call has no transcript.'),
  intelligence: callIntelligenceSchema
    .nullable()
    .describe(
      'The call intelligence (docs/features/call-intelligence.md); null until it is computed, and for calls without a transcript.',
    ),
  translations: z
    .array(
      z.object({
        language: z
          .string()
          .describe('The language the transcript was translated into (BCP 47, e.g. es), as the translation names it.'),
        provider: z.string().describe('The translator that made it (engine, language data and their versions).'),
        createdAt: z.string(),
      }),
    )
    .describe('The translations of the transcript available (POST /calls/{id}/transcript-translation), by language.'),
  issues: z.array(callIssueSchema).describe('Problems reported with the call (POST /calls/{id}/issues), oldest first.'),
  recording: z
    .object({
      status: z
        .enum(['in-progress', 'completed', 'absent', 'failed', 'deleted'])
        .describe(
          'in-progress: the carrier is recording; completed: GET /calls/{id}/recording streams it; absent or failed: the carrier made none; deleted: past its retention (or gone at the carrier).',
        ),
      durationSec: z.number().int().nullable().describe('Seconds recorded, once completed.'),
      channels: z.number().int().nullable().describe('1 (mono) or 2 (each party on its own channel), once completed.'),
      deletedAt: z.string().nullable().describe('ISO 8601 instant of its deletion; null while it exists.'),
    })
    .nullable()
    .describe(
      "The call's recording (docs/features/recordings.md); null: not recorded (the workspace was not recording calls when it was answered, or it never was).",
    ),
  functionCalls: z
    .array(functionCallSchema)
    .describe('The custom functions called during the call (docs/features/functions.md), oldest first.'),
  transfer: z
    .object({
      mode: z
        .enum(['cold', 'warm'])
        .describe("The agent's transferMode when transfer_to_human asked: warm, the human heard the summary first."),
      status: z
        .enum(['pending', 'answered', 'unanswered'])
        .describe(
          'answered: the human took the call (warm: bridged after the summary; the call ends transferred); unanswered: busy, no answer, failed, or (warm) hung up before the bridge: the lead heard that nobody could take the call (the call ends callback_requested); pending: not decided (the call ended first).',
        ),
      summary: z
        .string()
        .nullable()
        .describe(
          "What a warm transfer's human hears before the bridge (the model's, or composed by the script engine), at most 600 characters; null: none given.",
        ),
      requestedAt: z.string().describe('ISO 8601 instant transfer_to_human asked for the transfer.'),
    })
    .nullable()
    .describe(
      'The call handed to a human by transfer_to_human (docs/features/conversation/tools.md#warm-transfer); null: no transfer was asked.',
    ),
});

const newIssueSchema = z
  .strictObject({
    category: z.enum(CALL_ISSUE_CATEGORY_NAMES).describe(CATEGORY_LIST),
    note: z
      .string()
      .check(atMostCodePoints(noteLength))
      .default('')
      .describe(
        `What went wrong, at most ${noteLength} characters (code points), stored as sent; "" (the default) for none. ` +
          `Required (not blank) with the categories ${CATEGORIES_NEEDING_A_NOTE.join(', ')}.`,
      ),
  })
  .superRefine((issue, context) => {
    if (CATEGORIES_NEEDING_A_NOTE.includes(issue.category) && !issue.note.trim())
      context.addIssue({
        code: 'custom',
        path: ['note'],
        message: `a note is required with the category ${issue.category}`,
        input: issue.note,
      });
  });

export const callRoutes = [
  defineRoute({
    method: 'get',
    path: '/calls/{id}',
    access: { permission: 'calls.view' },
    summary:
      "One call of the workspace: its summary as GET /calls lists it, with the carrier's state, the transcript, the call intelligence, the translations available and the issues reported. An unknown id and another workspace's call are the same 403.",
    tags,
    params,
    responses: { 200: { description: 'The call.', schema: callDetailSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await getCall(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/calls/{id}/issues',
    access: { permission: 'calls.view' },
    summary: `The issues reported with the call, oldest first, all at once (at most ${issuesPerCall}).`,
    tags,
    params,
    responses: { 200: { description: 'The issues.', schema: z.array(callIssueSchema) } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await listCallIssues(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/calls/{id}/issues',
    // Spec section 5, stricter scopes for keys: the dashboard permission is calls.view, a key needs calls.edit.
    access: { permission: 'calls.edit' },
    summary:
      `Report a problem with a call: a category and a note. A key needs calls.edit (dashboard permission: calls.view). ` +
      `A call holds at most ${issuesPerCall} issues (409 call_issue_limit_reached). Issues are not edited or deleted.`,
    tags,
    params,
    body: newIssueSchema,
    responses: { 201: { description: 'The issue, as listed on the call.', schema: callIssueSchema } },
    errors: { 409: [ErrorCode.call_issue_limit_reached] },
    handler: async ({ services, principal, params, body }) => ({
      status: 201,
      body: await reportCallIssue(services, principal, params.id, body),
    }),
  }),
];
