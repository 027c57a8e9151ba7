import type { TelnyxConnection } from '../../lib/carriers/telnyx/telnyx-client';
import { createTelnyxRecordings } from '../../lib/carriers/telnyx/telnyx-recordings';
import { encodeClientState } from '../../lib/carriers/telnyx/telnyx-script';
import type { TelnyxWebhook } from '../../lib/carriers/telnyx/telnyx-webhooks';
import { ErrorCode } from '../../lib/error-codes';
import { recordsCallsOn } from '../../lib/recordings/recording-notice';
import { startRecordingOnce } from '../../lib/recordings/recording-start';
import { applyRecordingStatus, recordingOfCall } from '../../lib/recordings/recording-store';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import type { AppServices } from '../app-services';
import type { ScriptCallRow } from './carrier-call-store';

/**
 * Starts the recording of a call a person answered when its workspace records calls (docs/features/recordings.md#telnyx):
 * Telnyx's record_start on the call, both parties on their own channel, before the conversation (the script walk or
 * ConversationRelay) says its first line, so that the disclosure and its recording notice are recorded; read from the
 * same call row as the disclosure, so that the notice is said exactly when the call is recorded. Once per call.
 */
export async function startTelnyxRecording(
  services: AppServices,
  connection: TelnyxConnection,
  call: ScriptCallRow,
  attemptId: string,
  callControlId: string,
): Promise<void> {
  if (!call.recordingEnabled || !recordsCallsOn(call.provider)) return;
  await startRecordingOnce(poolSql(services.sql), call.id, 'Telnyx', async () =>
    (await createTelnyxRecordings(connection).start(callControlId, encodeClientState({ attemptId }))) ? null : false,
  );
}

/**
 * call.recording.saved (signed, verified like every Telnyx webhook: `connection` is the one that signed it): the call's
 * recording is complete. Telnyx names neither the recording nor (in its description) the call there, so the recording
 * is found by the call's call_control_id as the product stored it (GET /recordings filtered by it, the leg the webhook
 * names preferred), and its id, duration and channels stored. A call the product did not record, or another
 * connection's: unknown_call. Telnyx listing no recording of the call yet: 502 provider_error, nothing stored, so that
 * Telnyx delivers the webhook again.
 */
export async function receiveTelnyxRecordingSaved(
  services: AppServices,
  connection: TelnyxConnection,
  call: ScriptCallRow,
  attemptId: string,
  webhook: TelnyxWebhook,
): Promise<{ received: true; applied: boolean }> {
  const sql = poolSql(services.sql);
  const recording = await recordingOfCall(sql, call.workspaceId, call.id);
  if (!recording || !call.providerCallId) throw new Refusal(ErrorCode.unknown_call);
  // Settled already (a webhook delivered again, a recording since deleted): Telnyx is not asked again.
  if (!['starting', 'in-progress', 'failed'].includes(recording.status)) return { received: true, applied: false };
  const found = await createTelnyxRecordings(connection)
    .findOfCall(call.providerCallId, webhook.data.payload.call_leg_id)
    .catch((error: unknown) => {
      throw new Refusal(ErrorCode.provider_error, {
        detail: `Telnyx did not list the call's recordings: ${error instanceof Error ? error.message : 'failed'}`,
      });
    });
  if (!found) throw new Refusal(ErrorCode.provider_error, { detail: 'Telnyx lists no recording of the call (yet)' });
  const result = await applyRecordingStatus(sql, {
    connectionId: connection.id,
    attemptId,
    carrierRecordingId: found.id,
    status: 'completed',
    durationSec: found.durationSec,
    channels: found.channels,
    apply: true,
  });
  if (!result.found) throw new Refusal(ErrorCode.unknown_call);
  return { received: true, applied: result.applied };
}
