import { z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import { defineRoute } from '../http/route';
import { streamCallRecording } from './recordings';

/** The recordings' routes (docs/features/recordings.md). */
export const recordingRoutes = [
  defineRoute({
    method: 'get',
    path: '/calls/{id}/recording',
    access: { permission: 'calls.view' },
    summary:
      "The call's recording, a WAV (both parties, each on its own channel), streamed from the call's carrier with its " +
      "connection's credentials: nothing of the audio is stored by the product (docs/features/recordings.md). 404 " +
      'call_has_no_recording: the call was not recorded; 409 recording_not_ready: the carrier is still recording it; ' +
      "410 recording_deleted: deleted (its retention, or at the carrier). An unknown id and another workspace's call " +
      'are the same 403.',
    tags: ['Calls'],
    params: z.object({ id: z.string().describe('A call id of GET /calls.') }),
    responses: {
      200: { description: 'The recording: WAV audio (binary).', contentType: 'audio/x-wav', schema: z.string() },
    },
    errors: {
      404: [ErrorCode.call_has_no_recording],
      409: [ErrorCode.recording_not_ready, ErrorCode.no_carrier_connection],
      410: [ErrorCode.recording_deleted],
      502: [ErrorCode.provider_error],
    },
    handler: async ({ services, principal, params, res }) => streamCallRecording(services, principal, params.id, res),
  }),
];
