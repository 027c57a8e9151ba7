import type { TwilioRecordingCallback } from '../../lib/carriers/twilio/twilio-callbacks';
import type { TwilioConnection } from '../../lib/carriers/twilio/twilio-client';
import { createTwilioRecordings } from '../../lib/carriers/twilio/twilio-recordings';
import { twilioCallbackUrl } from '../../lib/carriers/twilio/twilio-urls';
import { ErrorCode } from '../../lib/error-codes';
import { applyRecordingStatus } from '../../lib/recordings/recording-store';
import { startRecordingOnce } from '../../lib/recordings/recording-start';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import type { AppServices } from '../app-services';

/**
 * Starts the recording of an answered call when its workspace records calls (docs/features/recordings.md#twilio):
 * Twilio's recording on the call (the SDK's calls(sid).recordings.create), both parties on their own channel, from the
 * answer's TwiML request to the call's end, whichever conversation the TwiML then runs (the Gather walk or
 * ConversationRelay). Once per call: the claim in the database makes a repeated TwiML request start nothing. A start
 * Twilio refuses is logged and marked failed; the call goes on unrecorded rather than not at all.
 */
export async function startTwilioRecording(
  services: AppServices,
  connection: TwilioConnection,
  call: { id: string; providerCallId: string | null },
  callSid: string | undefined,
  attemptId: string,
): Promise<void> {
  const sid = callSid ?? call.providerCallId;
  if (!sid) return;
  await startRecordingOnce(poolSql(services.sql), call.id, 'Twilio', () =>
    createTwilioRecordings(connection).start(
      sid,
      twilioCallbackUrl(services.publicBaseUrl!, 'recording', { connectionId: connection.id, attemptId }),
    ),
  );
}

/**
 * Twilio's recording status callback (docs/features/recordings.md#twilio), signed like the call's callbacks
 * (assertSignedByTwilio ran: `connection` is the one that signed it): completed stores the recording's duration and channels, absent says nothing was
 * recorded, failed that it could not be kept. The call is the attempt's, placed through the connection that signed it;
 * a callback about a call the product did not record, or about another connection's call, is unknown_call.
 * in-progress changes nothing.
 */
export async function receiveTwilioRecording(
  services: AppServices,
  connection: TwilioConnection,
  attemptId: string,
  form: TwilioRecordingCallback,
) {
  const duration = form.RecordingDuration === undefined ? null : Number(form.RecordingDuration);
  const result = await applyRecordingStatus(poolSql(services.sql), {
    connectionId: connection.id,
    attemptId,
    carrierRecordingId: form.RecordingSid,
    // in-progress is not applied (apply false): the status given then only fills the statement.
    status: form.RecordingStatus === 'in-progress' ? 'completed' : form.RecordingStatus,
    durationSec: duration !== null && duration >= 0 ? duration : null,
    channels: form.RecordingChannels === undefined ? null : Number(form.RecordingChannels),
    apply: form.RecordingStatus !== 'in-progress',
  });
  if (!result.found) throw new Refusal(ErrorCode.unknown_call);
  return { received: true as const, applied: result.applied };
}
