import { twilioClientOf, type TwilioConnection } from './twilio-client';
import { twilioRequest, TwilioRequestError } from './twilio-calls';
import { fetchRecordingMedia, type RecordingMedia } from '../recording-media';

/**
 * How each party is recorded: dual, the agent (Twilio's side) and the person each on a channel of their own, so that
 * either can be listened to or analysed alone; Twilio's default is mono.
 */
export const TWILIO_RECORDING_CHANNELS = 'dual';

/**
 * One Twilio account's call recordings, through the official SDK (docs/features/recordings.md#twilio), and their media
 * by Twilio's media URL with HTTP Basic (the SDK reads answers as text, which would corrupt audio).
 */
export function createTwilioRecordings(connection: TwilioConnection) {
  const client = twilioClientOf(connection);
  const accountSid = connection.accountSid;
  const baseUrl = connection.baseUrl.replace(/\/+$/, '');

  return {
    /**
     * Starts recording a call in progress (POST .../Calls/{CallSid}/Recordings.json), both parties on their own channel
     * from now to the call's end; Twilio posts `completed` (or `absent`: nothing was recorded) to `statusCallback`.
     * Answers the recording's SID.
     */
    async start(callSid: string, statusCallback: string): Promise<string> {
      const recording = await twilioRequest(() =>
        client.calls(callSid).recordings.create({
          recordingStatusCallback: statusCallback,
          recordingStatusCallbackMethod: 'POST',
          recordingStatusCallbackEvent: ['completed', 'absent'],
          recordingChannels: TWILIO_RECORDING_CHANNELS,
        }),
      );
      return recording.sid;
    },

    /**
     * The recording's audio as WAV (GET .../Recordings/{Sid}.wav), streamed as Twilio sends it; null when Twilio no
     * longer has it (404). The URL is the connection's own base URL (set by the operator), never one a callback gave.
     */
    async media(recordingSid: string): Promise<RecordingMedia | null> {
      const url = `${baseUrl}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Recordings/${encodeURIComponent(recordingSid)}.wav`;
      const [username, password] =
        'apiKeySecret' in connection.secrets
          ? [connection.apiKeySid!, connection.secrets.apiKeySecret]
          : [accountSid, connection.secrets.authToken];
      // Twilio may redirect to the file's storage: fetch drops the Authorization header on another origin.
      return fetchRecordingMedia(
        url,
        { Authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` },
        (message, status) => new TwilioRequestError(`Twilio ${message}`, status, status ? undefined : 'ECONNECT'),
      );
    },

    /** Deletes the recording at Twilio (DELETE .../Recordings/{Sid}.json); one Twilio no longer has (404) is gone too. */
    async remove(recordingSid: string): Promise<void> {
      try {
        await twilioRequest(() => client.recordings(recordingSid).remove());
      } catch (error) {
        if (error instanceof TwilioRequestError && error.status === 404) return;
        throw error;
      }
    },
  };
}
