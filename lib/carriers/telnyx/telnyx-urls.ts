import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The product's URL Telnyx sends a call's webhooks to (docs/features/carriers/telnyx.md#telnyx-webhooks): the dial's
 * `webhook_url`. The connection and the attempt are in the path: the connection picks the public key the signature is
 * checked with, and the attempt is the call's even before Telnyx's call_control_id is bound to it.
 */
export const TELNYX_CALL_ROUTE = '/telephony/telnyx/{connectionId}/calls/{attemptId}/webhook';

function callPath(call: { connectionId: string; attemptId: string }): string {
  return `/telephony/telnyx/${encodeURIComponent(call.connectionId)}/calls/${encodeURIComponent(call.attemptId)}`;
}

/** publicBaseUrl (PUBLIC_BASE_URL, as Telnyx reaches the API) + the webhook route of this call. */
export function telnyxWebhookUrl(publicBaseUrl: string, call: { connectionId: string; attemptId: string }): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}${callPath(call)}/webhook`;
}

/** The query parameter of a relay URL holding its token. */
export const TELNYX_RELAY_TOKEN_PARAMETER = 'token';

/**
 * The token of a call's ConversationRelay socket (docs/features/conversation/relay.md#telnyx): Telnyx signs nothing
 * when it opens the socket, so the URL the product hands it in conversation_relay_start (a Bearer-authenticated command
 * over TLS) carries the proof: HMAC-SHA256, keyed by the connection's API key, over the connection and the attempt,
 * base64url. Only the product and that Telnyx account know the key; the token opens that one call's socket, once.
 */
export function telnyxRelayToken(apiKey: string, call: { connectionId: string; attemptId: string }): string {
  return createHmac('sha256', apiKey).update(`relay\n${call.connectionId}\n${call.attemptId}`).digest('base64url');
}

/** Whether a handshake's token is the call's (compared in constant time). */
export function isTelnyxRelayToken(
  apiKey: string,
  call: { connectionId: string; attemptId: string },
  token: string | null,
): boolean {
  if (!token) return false;
  const expected = Buffer.from(telnyxRelayToken(apiKey, call));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The call's ConversationRelay socket: the relay route of the call on the WebSocket scheme of PUBLIC_BASE_URL
 * (https: wss://, http: ws://, a local twin's), with its token.
 */
export function telnyxRelayUrl(
  publicBaseUrl: string,
  call: { connectionId: string; attemptId: string },
  apiKey: string,
): string {
  const base = publicBaseUrl.replace(/\/+$/, '').replace(/^http/, 'ws');
  return `${base}${callPath(call)}/relay?${TELNYX_RELAY_TOKEN_PARAMETER}=${telnyxRelayToken(apiKey, call)}`;
}

/**
 * The route the connection's Call Control application sends its webhooks to (docs/features/carriers/inbound.md): the
 * events of calls placed to its numbers, until the product answers one and names the call's own webhook URL.
 */
export const TELNYX_INBOUND_ROUTE = '/telephony/telnyx/{connectionId}/inbound';

export function telnyxInboundUrl(publicBaseUrl: string, connectionId: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}${TELNYX_INBOUND_ROUTE.replace('{connectionId}', encodeURIComponent(connectionId))}`;
}
