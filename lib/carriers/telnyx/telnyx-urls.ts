/**
 * The product's URL Telnyx sends a call's webhooks to (docs/features/carriers.md#telnyx-webhooks): the dial's
 * `webhook_url`. The connection and the attempt are in the path: the connection picks the public key the signature is
 * checked with, and the attempt is the call's even before Telnyx's call_control_id is bound to it.
 */
export const TELNYX_CALL_ROUTE = '/telephony/telnyx/{connectionId}/calls/{attemptId}/webhook';

/** publicBaseUrl (PUBLIC_BASE_URL, as Telnyx reaches the API) + the webhook route of this call. */
export function telnyxWebhookUrl(publicBaseUrl: string, call: { connectionId: string; attemptId: string }): string {
  const path = TELNYX_CALL_ROUTE.replace('{connectionId}', encodeURIComponent(call.connectionId)).replace(
    '{attemptId}',
    encodeURIComponent(call.attemptId),
  );
  return `${publicBaseUrl.replace(/\/+$/, '')}${path}`;
}
