import type { RecordingMedia } from '../carriers/recording-media';
import type { OpenedCarrierConnection } from '../carrier-connections/connections';
import { createTelnyxRecordings } from '../carriers/telnyx/telnyx-recordings';
import { createTwilioRecordings } from '../carriers/twilio/twilio-recordings';

/** What the recordings feature asks of a carrier about a recording it holds (docs/features/recordings.md). */
export interface CarrierRecordings {
  /** The audio; null when the carrier no longer has it. */
  media(carrierRecordingId: string): Promise<RecordingMedia | null>;
  /** Deletes it at the carrier; one the carrier no longer has is deleted too. */
  remove(carrierRecordingId: string): Promise<void>;
}

/** Thrown when a carrier's connection cannot do what recordings need (a carrier this product does not record on). */
export class RecordingsUnsupportedError extends Error {
  constructor(provider: string) {
    super(`recordings are not supported on ${provider} connections`);
    this.name = 'RecordingsUnsupportedError';
  }
}

/** The recordings of the carrier account a connection opens. */
export function carrierRecordingsOf(connection: OpenedCarrierConnection): CarrierRecordings {
  if (connection.provider === 'twilio' || connection.provider === 'twilio-twin')
    return createTwilioRecordings(connection);
  if (connection.provider === 'telnyx' || connection.provider === 'telnyx-twin')
    return createTelnyxRecordings(connection);
  throw new RecordingsUnsupportedError(connection.provider);
}
