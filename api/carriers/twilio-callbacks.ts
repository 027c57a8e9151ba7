import type { Request } from 'express';
import { applyAnsweredBy } from '../../lib/calls/call-end';
import { openCarrierConnection, type OpenedCarrierConnection } from '../../lib/carriers/connections';
import {
  answeredByEventOfTwilio,
  callEventOfTwilio,
  publicUrlOf,
  signedByTwilio,
  TWILIO_SIGNATURE_HEADER,
  type TwilioAmdCallback,
  type TwilioStatusCallback,
} from '../../lib/carriers/twilio/twilio-callbacks';
import { twimlOfCall, type TwimlCall } from '../../lib/carriers/twilio/twiml';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import { receiveCallEvent } from '../calls/telephony-events';
import type { AppServices } from '../app-services';

/** The connection whose auth token verified a request, for its handler (the path named it; the body never does). */
const verified = new WeakMap<Request, OpenedCarrierConnection>();

/**
 * 401 invalid_signature unless Twilio signed this request with the auth token of the live Twilio connection its path
 * names, over the public URL it called (PUBLIC_BASE_URL + the path and query as received) and its form. An unknown or
 * removed connection, another carrier's, one without an auth token, a missing or wrong signature: all the same 401,
 * before the body is judged, and nothing changes.
 */
export async function assertSignedByTwilio(req: Request, services: AppServices): Promise<void> {
  const connection =
    services.carrierKeyring && services.publicBaseUrl
      ? await openCarrierConnection(services.db, services.carrierKeyring, String(req.params.connectionId))
      : null;
  const twilioConnection =
    connection && (connection.provider === 'twilio' || connection.provider === 'twilio-twin') ? connection : null;
  const authToken =
    twilioConnection && 'authToken' in twilioConnection.secrets ? twilioConnection.secrets.authToken : null;
  const form = (req.body ?? {}) as Record<string, unknown>;
  const url = publicUrlOf(services.publicBaseUrl ?? '', req.originalUrl);
  if (!twilioConnection || !signedByTwilio(authToken, req.get(TWILIO_SIGNATURE_HEADER), url, form))
    throw new Refusal(ErrorCode.invalid_signature);
  verified.set(req, twilioConnection);
}

/**
 * The verified connection of the request, once the call of the attempt its URL names is known to be placed through
 * that very connection: a callback signed by one workspace's account for another's call (or a call of another
 * connection) is unknown_call, and nothing changes.
 */
async function connectionOfCall(services: AppServices, req: Request, attemptId: string) {
  const connection = verified.get(req);
  // assertSignedByTwilio runs before every handler here: a request without it never reaches one.
  if (!connection) throw new Refusal(ErrorCode.invalid_signature);
  const [call] = await poolSql(services.sql)<{ id: string }>(
    {
      name: 'twilio_call_of_connection',
      text: `SELECT id::text FROM "Call" WHERE "attemptId" = $1 AND "carrierConnectionId" = $2::uuid`,
    },
    attemptId,
    connection.id,
  );
  if (!call) throw new Refusal(ErrorCode.unknown_call);
  return connection;
}

/**
 * A status callback applied as the product's carrier event (api/calls/telephony-events.ts, lib/calls/call-end.ts): once
 * per CallSid and SequenceNumber, only forward, a terminal state ending the call and signalling its workflow.
 */
export async function receiveTwilioStatus(
  services: AppServices,
  req: Request,
  attemptId: string,
  form: TwilioStatusCallback,
) {
  const connection = await connectionOfCall(services, req, attemptId);
  return receiveCallEvent(services, connection.provider, callEventOfTwilio(form, attemptId));
}

/** The asynchronous answering-machine detection's result: the call's answeredBy, while it is still on. */
export async function receiveTwilioAmd(
  services: AppServices,
  req: Request,
  attemptId: string,
  form: TwilioAmdCallback,
) {
  const connection = await connectionOfCall(services, req, attemptId);
  const result = await applyAnsweredBy(
    poolSql(services.sql),
    connection.provider,
    answeredByEventOfTwilio(form, attemptId),
  );
  if (!result.found) throw new Refusal(ErrorCode.unknown_call);
  return { received: true as const, applied: result.applied };
}

/** The TwiML of the call the URL names (lib/carriers/twilio/twiml.ts, the seam): its agent and its lead. */
export async function twilioCallTwiml(services: AppServices, req: Request, attemptId: string): Promise<string> {
  const connection = await connectionOfCall(services, req, attemptId);
  const [call] = await poolSql(services.sql)<{
    agent: TwimlCall['agent'];
    leadName: string | null;
    leadFields: unknown;
    testLead: unknown;
  }>(
    {
      name: 'twilio_call_twiml',
      text: `SELECT CASE WHEN a.id IS NULL THEN NULL ELSE json_build_object('language', a.language, 'voiceId', a."voiceId", 'script', a.script) END AS agent,
                    l.name AS "leadName", l.fields AS "leadFields", c."testLead"
               FROM "Call" c LEFT JOIN "Lead" l ON l.id = c."leadId" LEFT JOIN "Agent" a ON a.id = c."agentId"
              WHERE c."attemptId" = $1 AND c."carrierConnectionId" = $2::uuid`,
    },
    attemptId,
    connection.id,
  );
  if (!call) throw new Refusal(ErrorCode.unknown_call);
  const testLead = call.testLead as { name?: string | null; fields?: Record<string, unknown> } | null;
  return twimlOfCall({
    agent: call.agent,
    lead: {
      name: call.leadName ?? testLead?.name ?? null,
      fields: ((call.leadFields ?? testLead?.fields) as Record<string, unknown> | null) ?? {},
    },
  });
}
