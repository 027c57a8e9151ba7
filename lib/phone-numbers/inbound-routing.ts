import type { Database } from '../database';
import type { Keyring } from '../secrets/keyring';
import { familyOf, openCarrierConnection } from '../carrier-connections/connections';
import { pointTwilioNumber } from '../carriers/twilio/twilio-numbers';
import type { TwilioConnection } from '../carriers/twilio/twilio-client';
import { pointTelnyxNumber } from '../carriers/telnyx/telnyx-numbers';
import type { TelnyxConnection } from '../carriers/telnyx/telnyx-client';
import { log } from '../log';

/**
 * Pointing a number's inbound calls at the product (docs/features/carriers/inbound.md#pointing-the-number): the carrier of
 * the number's connection is told, through its official SDK, to send the number's calls to the product's inbound
 * routes, and what the carrier answered is recorded on the number (PhoneNumber.inboundRoutedConnectionId,
 * inboundRoutedAt, inboundCarrierRef). inboundReady reads it (lib/agents/inbound-readiness.ts).
 */
export interface InboundRoutingDependencies {
  db: Database;
  /** The key ring the connections' secrets are sealed under; absent: no connection can be opened. */
  keyring?: Keyring;
  /** PUBLIC_BASE_URL, as the carriers reach the API; absent: nothing can be pointed at it. */
  publicBaseUrl?: string;
}

/** Why a number was not confirmed pointed at the product. */
export type InboundPointingRefusal =
  /** The number routes to no agent: nothing to point (its carrier is left as it is). */
  | 'no_inbound_agent'
  | 'no_carrier_connection'
  | 'not_configured'
  | 'number_not_in_account'
  | 'not_confirmed'
  | 'carrier_unavailable';

export type InboundPointing = { confirmed: true } | { confirmed: false; reason: InboundPointingRefusal };

/**
 * Points the number at the product through its carrier connection and records the carrier's answer: confirmed, the
 * connection and the carrier's id of the number; otherwise the confirmation is cleared (inboundReady false). A number
 * without a connection (the simulated carrier takes no inbound calls) or without an inbound agent is not pointed. A
 * carrier that fails to answer (down, 5xx) leaves the number unconfirmed: setting the routing again retries.
 */
export async function pointNumberAtProduct(
  dependencies: InboundRoutingDependencies,
  numberId: string,
): Promise<InboundPointing> {
  const { db } = dependencies;
  const number = await db.phoneNumber.findUnique({
    where: { id: numberId },
    select: { id: true, e164: true, carrierConnectionId: true, inboundAgentId: true },
  });
  if (!number) return { confirmed: false, reason: 'no_carrier_connection' };
  const outcome = await askCarrier(dependencies, number);
  await db.phoneNumber.update({
    where: { id: number.id },
    data: outcome.confirmed
      ? {
          inboundRoutedConnectionId: outcome.connectionId,
          inboundRoutedAt: new Date(),
          inboundCarrierRef: outcome.carrierRef,
        }
      : { inboundRoutedConnectionId: null, inboundRoutedAt: null },
  });
  return outcome.confirmed ? { confirmed: true } : outcome;
}

async function askCarrier(
  { db, keyring, publicBaseUrl }: InboundRoutingDependencies,
  number: { id: string; e164: string; carrierConnectionId: string | null; inboundAgentId: string | null },
): Promise<
  { confirmed: true; connectionId: string; carrierRef: string } | { confirmed: false; reason: InboundPointingRefusal }
> {
  if (!number.inboundAgentId) return { confirmed: false, reason: 'no_inbound_agent' };
  if (!number.carrierConnectionId) return { confirmed: false, reason: 'no_carrier_connection' };
  if (!keyring || !publicBaseUrl) return { confirmed: false, reason: 'not_configured' };
  const connection = await openCarrierConnection(db, keyring, number.carrierConnectionId);
  if (!connection) return { confirmed: false, reason: 'no_carrier_connection' };
  try {
    const answer =
      familyOf(connection.provider) === 'twilio'
        ? await pointTwilioNumber(connection as TwilioConnection, number.e164, publicBaseUrl)
        : await pointTelnyxNumber(connection as TelnyxConnection, number.e164, publicBaseUrl);
    return answer.confirmed
      ? { confirmed: true, connectionId: connection.id, carrierRef: answer.carrierRef }
      : { confirmed: false, reason: answer.reason };
  } catch (error) {
    log.warn(
      { err: error, phoneNumberId: number.id, connectionId: connection.id },
      'inbound routing: the carrier did not answer the number update',
    );
    return { confirmed: false, reason: 'carrier_unavailable' };
  }
}
