/**
 * The product's URLs Twilio calls for one call (docs/features/carriers/twilio.md#twilio-callbacks). The connection and the
 * attempt are in the path, never read from the body: the connection picks the auth token the signature is checked
 * with, and the attempt lets the first callback bind Twilio's CallSid to the attempt even when the dial's own answer
 * was lost.
 */
export const TWILIO_CALL_ROUTE = '/telephony/twilio/{connectionId}/calls/{attemptId}';

/**
 * status, amd: callbacks; twiml: the answer's document and the script walk's steps; relay: the ConversationRelay socket;
 * relay-ended: <Connect>'s action when the conversation ends; transfer-ended: the transfer <Dial>'s action;
 * transfer-whisper: a warm transfer's <Number url>, what the human hears before the bridge; recording: the recording
 * status callback (docs/features/recordings.md#twilio).
 */
export type TwilioCallbackKind =
  'status' | 'amd' | 'twiml' | 'relay' | 'relay-ended' | 'transfer-ended' | 'transfer-whisper' | 'recording';

/** publicBaseUrl (PUBLIC_BASE_URL, as the carrier reaches the API) + the route of this kind for this call. */
export function twilioCallbackUrl(
  publicBaseUrl: string,
  kind: TwilioCallbackKind,
  call: { connectionId: string; attemptId: string },
): string {
  const path = TWILIO_CALL_ROUTE.replace('{connectionId}', encodeURIComponent(call.connectionId)).replace(
    '{attemptId}',
    encodeURIComponent(call.attemptId),
  );
  return `${publicBaseUrl.replace(/\/+$/, '')}${path}/${kind}`;
}

/**
 * The call's ConversationRelay socket (docs/features/conversation/relay.md): the relay route of the call on the
 * WebSocket scheme of PUBLIC_BASE_URL (https: wss://, http: ws://, a local twin's). Twilio signs the handshake over
 * this URL as called.
 */
export function twilioRelayUrl(publicBaseUrl: string, call: { connectionId: string; attemptId: string }): string {
  return twilioCallbackUrl(publicBaseUrl, 'relay', call).replace(/^http/, 'ws');
}

/**
 * The routes a number of a Twilio connection is pointed at (docs/features/carriers/inbound.md#pointing-the-number): its
 * VoiceUrl (`voice`: the TwiML of a call a person places to it) and its StatusCallback (`status`). The connection is
 * in the path: its auth token checks the signature; the call is found by the CallSid Twilio sends.
 */
export const TWILIO_INBOUND_ROUTE = '/telephony/twilio/{connectionId}/inbound';

export function twilioInboundUrl(publicBaseUrl: string, kind: 'voice' | 'status', connectionId: string): string {
  const path = TWILIO_INBOUND_ROUTE.replace('{connectionId}', encodeURIComponent(connectionId));
  return `${publicBaseUrl.replace(/\/+$/, '')}${path}/${kind}`;
}
