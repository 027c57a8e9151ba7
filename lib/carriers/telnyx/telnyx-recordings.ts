import { fetchRecordingMedia, type RecordingMedia } from '../recording-media';
import { telnyxClientOf, type TelnyxConnection } from './telnyx-client';
import { telnyxRequest, TelnyxRequestError } from './telnyx-calls';

/**
 * How each party is recorded: dual, the call's own leg (the person) on the first channel and the rest (the agent) on
 * the second, so that either can be listened to or analysed alone; Telnyx's only other choice is single (mixed).
 */
export const TELNYX_RECORDING_CHANNELS = 'dual';
/** WAV (PCM), as Twilio's: what the listening route answers; Telnyx's other format is mp3. */
export const TELNYX_RECORDING_FORMAT = 'wav';
/** The command_id of a call's recording: started once per call, however often it is commanded. */
export const RECORDING_COMMAND_ID = 'recording';

/** A recording as Telnyx lists it (GET /recordings): what the product keeps of it. */
export interface TelnyxRecordingFound {
  id: string;
  durationSec: number | null;
  channels: 1 | 2 | null;
}

/**
 * One Telnyx account's call recordings, through the official SDK (docs/features/recordings.md#telnyx): started on a call
 * (actions/record_start), found by their call (GET /recordings filtered by call_control_id: neither record_start's answer
 * nor call.recording.saved carries the recording's id), heard by the recording's fresh download URL and deleted.
 */
export function createTelnyxRecordings(connection: TelnyxConnection) {
  const client = telnyxClientOf(connection);
  const notFound = (error: unknown) => error instanceof TelnyxRequestError && error.status === 404;

  return {
    /**
     * Starts recording the answered call (actions/record_start, StartCallRecord), both parties on their own channel,
     * from now to the call's end; Telnyx then sends call.recording.saved to the call's webhook URL. Once per call (its
     * command_id). False when the call has ended.
     */
    async start(callControlId: string, clientState: string | undefined): Promise<boolean> {
      try {
        await telnyxRequest(() =>
          client.calls.actions.startRecording(callControlId, {
            format: TELNYX_RECORDING_FORMAT,
            channels: TELNYX_RECORDING_CHANNELS,
            command_id: RECORDING_COMMAND_ID,
            ...(clientState && { client_state: clientState }),
          }),
        );
        return true;
      } catch (error) {
        if (notFound(error) || (error instanceof TelnyxRequestError && error.code === '90018')) return false;
        throw error;
      }
    },

    /**
     * The call's recording (GET /recordings?filter[call_control_id]=...), the one of `callLegId` when the call's leg is
     * known, else the latest; null when Telnyx lists none. One page of 20: a call the product records once.
     */
    async findOfCall(callControlId: string, callLegId: string | undefined): Promise<TelnyxRecordingFound | null> {
      const page = await telnyxRequest(() => client.recordings.list({ filter: { call_control_id: callControlId } }));
      const listed = page.data.filter((recording) => recording.id);
      const found =
        listed.find((recording) => callLegId && recording.call_leg_id === callLegId) ??
        listed.sort((a, b) => (b.created_at ?? '').localeCompare(a.created_at ?? ''))[0];
      if (!found) return null;
      return {
        id: found.id!,
        durationSec: typeof found.duration_millis === 'number' ? Math.round(found.duration_millis / 1_000) : null,
        channels: found.channels === 'dual' ? 2 : found.channels === 'single' ? 1 : null,
      };
    },

    /**
     * The recording's audio as WAV: the recording (GET /recordings/{id}, with the API key), then its download URL, fresh
     * from that answer (Telnyx's expire within minutes: never stored), fetched without credentials (it is a presigned
     * URL of Telnyx's storage: the API key is never sent to it). Null when Telnyx no longer has the recording.
     */
    async media(recordingId: string): Promise<RecordingMedia | null> {
      let recording;
      try {
        ({ data: recording } = await telnyxRequest(() => client.recordings.retrieve(recordingId)));
      } catch (error) {
        if (notFound(error)) return null;
        throw error;
      }
      const url = recording?.download_urls?.wav;
      if (!url) return null;
      return fetchRecordingMedia(
        url,
        {},
        (message, status) => new TelnyxRequestError(`Telnyx ${message}`, status, undefined, undefined),
      );
    },

    /** Deletes the recording at Telnyx (DELETE /recordings/{id}); one Telnyx no longer has (404) is gone too. */
    async remove(recordingId: string): Promise<void> {
      try {
        await telnyxRequest(() => client.recordings.delete(recordingId));
      } catch (error) {
        if (notFound(error)) return;
        throw error;
      }
    },
  };
}
