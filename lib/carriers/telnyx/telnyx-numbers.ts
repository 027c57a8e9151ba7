import { telnyxClientOf, type TelnyxConnection } from './telnyx-client';
import { telnyxRequest } from './telnyx-calls';
import { telnyxInboundUrl } from './telnyx-urls';

/** What Telnyx answered when asked to send a number's calls to the product. */
export type TelnyxNumberPointing =
  { confirmed: true; carrierRef: string } | { confirmed: false; reason: 'number_not_in_account' | 'not_confirmed' };

/**
 * Points the account's number `e164` at the product through the official SDK (docs/features/carriers/inbound.md#pointing-the-number):
 * the number found by `filter[phone_number]` and put on the connection's Call Control application (UpdatePhoneNumber,
 * `connection_id`), and that application's `webhook_event_url` made the product's inbound route of the connection
 * (UpdateCallControlApplication, its name kept as Telnyx has it). Confirmed only when both answers carry those values.
 * The application's outbound calls are untouched: each dial names its own webhook URL.
 */
export async function pointTelnyxNumber(
  connection: TelnyxConnection,
  e164: string,
  publicBaseUrl: string,
): Promise<TelnyxNumberPointing> {
  const client = telnyxClientOf(connection);
  const applicationId = connection.connectionId;
  const webhookEventUrl = telnyxInboundUrl(publicBaseUrl, connection.id);
  const page = await telnyxRequest(() => client.phoneNumbers.list({ filter: { phone_number: e164 } }));
  const number = page.data.find((candidate) => candidate.phone_number === e164);
  if (!number?.id) return { confirmed: false, reason: 'number_not_in_account' };
  const updated = await telnyxRequest(() => client.phoneNumbers.update(number.id!, { connection_id: applicationId }));
  const { data: application } = await telnyxRequest(() => client.callControlApplications.retrieve(applicationId));
  const pointed = await telnyxRequest(() =>
    client.callControlApplications.update(applicationId, {
      application_name: application?.application_name ?? 'workspace',
      webhook_event_url: webhookEventUrl,
    }),
  );
  return updated.data?.connection_id === applicationId && pointed.data?.webhook_event_url === webhookEventUrl
    ? { confirmed: true, carrierRef: number.id }
    : { confirmed: false, reason: 'not_confirmed' };
}
