import { twilioClientOf, type TwilioConnection } from './twilio-client';
import { twilioInboundUrl } from './twilio-urls';
import { twilioRequest } from './twilio-calls';

/** What Twilio answered when asked to send a number's calls to the product. */
export type TwilioNumberPointing =
  | { confirmed: true; carrierRef: string }
  /** The account has no such number (it is another account's, or was released at Twilio). */
  | { confirmed: false; reason: 'number_not_in_account' }
  /** Twilio took the update but its answer shows other URLs (a VoiceApplicationSid or a trunk set on the number). */
  | { confirmed: false; reason: 'not_confirmed' };

/**
 * Points the account's number `e164` at the product through the official SDK (docs/features/carriers/inbound.md#pointing-the-number):
 * IncomingPhoneNumbers listed by PhoneNumber, then the number updated with VoiceUrl and StatusCallback (POST), the
 * product's inbound routes of this connection. Confirmed only when Twilio's answer carries those very URLs. A failed
 * request is a TwilioRequestError (Twilio's status and code, never the request and its credentials).
 */
export async function pointTwilioNumber(
  connection: TwilioConnection,
  e164: string,
  publicBaseUrl: string,
): Promise<TwilioNumberPointing> {
  const client = twilioClientOf(connection);
  const voiceUrl = twilioInboundUrl(publicBaseUrl, 'voice', connection.id);
  const statusCallback = twilioInboundUrl(publicBaseUrl, 'status', connection.id);
  const [number] = await twilioRequest(() => client.incomingPhoneNumbers.list({ phoneNumber: e164, limit: 1 }));
  if (!number) return { confirmed: false, reason: 'number_not_in_account' };
  const updated = await twilioRequest(() =>
    client
      .incomingPhoneNumbers(number.sid)
      .update({ voiceUrl, voiceMethod: 'POST', statusCallback, statusCallbackMethod: 'POST' }),
  );
  return updated.voiceUrl === voiceUrl && updated.statusCallback === statusCallback
    ? { confirmed: true, carrierRef: updated.sid }
    : { confirmed: false, reason: 'not_confirmed' };
}
