import { z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import { defineRoute } from '../http/route';
import { rerunCallIntelligence } from './call-intelligence';

const rerunSchema = z.object({
  callId: z.string(),
  jobId: z
    .string()
    .describe(
      "The re-run's durable job (a Temporal workflow id). Done when GET /calls/{id} answers intelligence.jobId equal to it.",
    ),
  status: z.literal('queued').describe('The job is accepted; it runs on the worker.'),
  requestedAt: z.string().describe('When the re-run was asked for.'),
});

export const callIntelligenceRoutes = [
  defineRoute({
    method: 'post',
    path: '/calls/{id}/intelligence',
    access: { permission: 'calls.edit' },
    summary:
      "Re-run extraction and evaluation of a call's transcript (docs/features/call-intelligence.md) as a durable job; the result replaces the call's intelligence. A call without a transcript: 409 call_has_no_transcript.",
    tags: ['Calls'],
    params: z.object({ id: z.string().describe('A call id of GET /calls.') }),
    responses: { 202: { description: 'The job, accepted.', schema: rerunSchema } },
    errors: { 409: [ErrorCode.call_has_no_transcript] },
    handler: async ({ services, principal, params }) => ({
      status: 202,
      body: await rerunCallIntelligence(services, principal, params.id),
    }),
  }),
];
