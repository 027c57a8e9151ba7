import type { Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { openCarrierConnection } from '../../lib/carrier-connections/connections';
import { ErrorCode } from '../../lib/error-codes';
import { carrierRecordingsOf } from '../../lib/recordings/carrier-recordings';
import { recordingOfCall } from '../../lib/recordings/recording-store';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { callIdWhere } from '../calls/call-store';

/**
 * The recording of a call of the caller's workspace (docs/features/recordings.md#listening), or the refusal that says
 * why there is none to hear. Another workspace's call, or an unknown id: 403, as every call route.
 */
async function playableRecording(services: AppServices, principal: Principal, callId: string) {
  const call = await findOwned(principal, callId, (where) => callIdWhere(services.db, where));
  const recording = (await recordingOfCall(poolSql(services.sql), principal.workspaceId, call.id)) ?? { none: true };
  if ('none' in recording || recording.status === 'failed' || recording.status === 'absent')
    throw new Refusal(ErrorCode.call_has_no_recording, {
      detail:
        'none' in recording
          ? 'the call was not recorded: its workspace was not recording calls when it was answered, or it was never answered'
          : `the carrier made no recording of the call (${recording.status})`,
    });
  if (recording.status === 'deleted')
    throw new Refusal(ErrorCode.recording_deleted, { deletedAt: recording.deletedAt?.toISOString() ?? null });
  if (recording.status !== 'completed' || !recording.carrierRecordingId)
    throw new Refusal(ErrorCode.recording_not_ready, { status: recording.status });
  return { ...recording, carrierRecordingId: recording.carrierRecordingId };
}

/**
 * Streams the call's recording from its carrier, with the call's connection's credentials (never stored here, never
 * in the answer): the bytes are passed on as they come. A connection since removed: 409 no_carrier_connection (its
 * credentials are gone with it). A recording the carrier no longer has: 410 recording_deleted.
 */
export async function streamCallRecording(
  services: AppServices,
  principal: Principal,
  callId: string,
  res: Response,
): Promise<{ status: 200 }> {
  const recording = await playableRecording(services, principal, callId);
  const connection = services.carrierKeyring
    ? await openCarrierConnection(services.db, services.carrierKeyring, recording.carrierConnectionId)
    : null;
  if (!connection)
    throw new Refusal(ErrorCode.no_carrier_connection, {
      e164: null,
      detail: 'the carrier connection the call was placed through was removed: its recording can no longer be fetched',
    });
  let media;
  try {
    media = await carrierRecordingsOf(connection).media(recording.carrierRecordingId);
  } catch (error) {
    throw new Refusal(ErrorCode.provider_error, {
      detail: `the carrier did not send the recording: ${error instanceof Error ? error.message : 'failed'}`,
    });
  }
  if (!media)
    throw new Refusal(ErrorCode.recording_deleted, { deletedAt: null, detail: 'the carrier no longer has it' });
  res.status(200).set({
    'Content-Type': media.contentType,
    'Cache-Control': 'private, no-store',
    'Content-Disposition': `attachment; filename="call-${recording.callId}.wav"`,
    ...(media.length !== null && { 'Content-Length': String(media.length) }),
  });
  await pipeline(media.body, res);
  return { status: 200 };
}
