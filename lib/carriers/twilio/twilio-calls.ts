import {
  CarrierRefusedNumberError,
  CarrierRefusedSetupError,
  type CarrierSetupRefusal,
  type CarrierCallSnapshot,
  type CarrierDialRequest,
} from '../../calls/carrier';
import { MAX_CALL_LENGTH_MS, RING_TIMEOUT_MS } from '../../calls/call-deadline';
import { isTerminalCallState } from '../../calls/call-states';
import { twilioClientOf, type TwilioConnection } from './twilio-client';
import { answeredByOfTwilio, carrierStateOfTwilio, type TwilioCallStatus } from './twilio-states';
import { twilioCallbackUrl } from './twilio-urls';

/**
 * How far Twilio's clock (a call's date_created, to the second) may be behind ours when the attempt was recorded
 * just before its dial: a call of the attempt is never older than its record minus this.
 */
export const TWILIO_CLOCK_SKEW_MS = 60_000;

/**
 * Twilio's refusals of the number itself at a create: 21211 the To number is not a valid phone number, 21214 it
 * cannot be reached, 21217 it does not appear to be valid.
 */
const INVALID_NUMBER_CODES: ReadonlySet<unknown> = new Set([21211, 21214, 21217]);

/**
 * Twilio's refusals at a create of the workspace's setup, not of the lead: every lead (to that destination) would meet
 * them, so they are thrown as CarrierRefusedSetupError and pause the campaign (docs/features/carriers/twilio.md#refusals-at-the-dial).
 * Any other refusal is thrown as it is and retried (and counted by the carrier breaker).
 */
const SETUP_REFUSALS: ReadonlyMap<unknown, CarrierSetupRefusal> = new Map<unknown, CarrierSetupRefusal>([
  // The From is none of the account's Twilio numbers or verified caller ids ("'From' phone number not verified").
  [21210, 'caller_number_refused'],
  // The From is not a valid phone number.
  [21212, 'caller_number_refused'],
  // "Authenticate" (401): wrong or revoked credentials (a deleted API key, a changed auth token), a closed account.
  [20003, 'carrier_account_refused'],
  // "Account not active": suspended (no funds) or not yet activated.
  [20005, 'carrier_account_refused'],
  // "'To' phone number not verified": a trial account may call only its verified numbers.
  [21219, 'carrier_account_refused'],
  // "Account not authorized to call +X. Perhaps you need to enable some international permissions": the country of
  // the To is not enabled in the account's Voice Geographic Permissions.
  [21215, 'destination_not_permitted'],
  // "Call blocked by Twilio": a destination of high fraud risk, a regulatory block, or a +1 call from an account
  // without a Primary Customer Profile (which every US lead would meet).
  [21216, 'destination_not_permitted'],
]);

/** Answering-machine detection that waits for the greeting's end, so that a message can be left after the beep. */
const MACHINE_DETECTION = 'DetectMessageEnd';

/** The attempt's call cannot be told apart from another call Twilio placed to the same number: refuse to dial. */
export class AmbiguousAttemptError extends Error {
  constructor(attemptId: string, sids: readonly string[]) {
    super(
      `attempt ${attemptId}: Twilio placed ${sids.length} calls that may be this attempt's (${sids.join(', ')}); not dialing again until a callback binds one`,
    );
    this.name = 'AmbiguousAttemptError';
  }
}

/**
 * What a request to Twilio failed with, and nothing more: Twilio's answer (its HTTP status, its error code), or the
 * network's (ECONNRESET...). The SDK's own errors are not let through: a network failure is axios's error, which
 * holds the request it was making, Basic authorization header included, and whoever logs it (the worker logs a failed
 * activity whole) would log the account's credentials.
 */
export class TwilioRequestError extends Error {
  constructor(
    message: string,
    /** Twilio's HTTP status; undefined when no answer came. */
    readonly status: number | undefined,
    /** Twilio's error code (21211...), or the network's (ECONNRESET...). */
    readonly code: string | number | undefined,
  ) {
    super(message);
    this.name = 'TwilioRequestError';
  }
}

function requestErrorOf(error: unknown): TwilioRequestError {
  const { message, status, code } = (typeof error === 'object' && error !== null ? error : {}) as {
    message?: unknown;
    status?: unknown;
    code?: unknown;
  };
  return new TwilioRequestError(
    typeof message === 'string' ? message : 'Twilio request failed',
    typeof status === 'number' ? status : undefined,
    typeof code === 'string' || typeof code === 'number' ? code : undefined,
  );
}

/** One request to Twilio; a failure rethrown as a TwilioRequestError (no request, no credentials in it). */
export async function twilioRequest<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw requestErrorOf(error);
  }
}

const restStatusOf = (error: unknown): number | undefined =>
  error instanceof TwilioRequestError ? error.status : undefined;

/** The product's view of a Twilio Call resource. */
function snapshotOf(
  call: { sid: string; status: string; answeredBy: string | null; duration: string | null },
  attemptId: string,
): CarrierCallSnapshot {
  const status = carrierStateOfTwilio(call.status as TwilioCallStatus);
  return {
    providerCallId: call.sid,
    attemptId,
    status,
    answeredBy: answeredByOfTwilio(call.answeredBy),
    durationMs: isTerminalCallState(status) && call.duration !== null ? Number(call.duration) * 1000 : null,
    reason: null,
  };
}

/**
 * One Twilio account's calls, through the official SDK (docs/features/carriers/twilio.md). Built per call from the
 * call's connection, opened in the worker; nothing is kept between calls.
 */
export function createTwilioCalls(connection: TwilioConnection, { publicBaseUrl }: { publicBaseUrl: string }) {
  const client = twilioClientOf(connection);
  const urlOf = (kind: 'status' | 'amd' | 'twiml', attemptId: string) =>
    twilioCallbackUrl(publicBaseUrl, kind, { connectionId: connection.id, attemptId });

  /** The call as Twilio has it now (GET .../Calls/{Sid}.json); null when Twilio does not know it (404). */
  const fetchCall = async (callSid: string, attemptId: string): Promise<CarrierCallSnapshot | null> => {
    try {
      return snapshotOf(await twilioRequest(() => client.calls(callSid).fetch()), attemptId);
    } catch (error) {
      if (restStatusOf(error) === 404) return null;
      throw error;
    }
  };

  return {
    /**
     * Creates the call (POST .../Calls.json). Every URL Twilio will call carries the connection and the attempt, so
     * that any callback binds the CallSid to the attempt even when this answer is lost. completed is always subscribed:
     * it carries every end (completed, busy, no-answer, failed, canceled). ringing and answered as the dial request
     * asks (TELEPHONY_STATUS_CALLBACK_EVENTS). Not initiated: it is Twilio's queued-to-dialed step, which this answer
     * already tells (the call records queued with its CallSid), so it would cost every call a callback, a signature
     * check and a write for nothing, as queued would on any carrier (lib/calls/call-states.ts). A lost answer is found
     * by listing, or bound by the next callback (docs/features/carriers/twilio.md#a-dial-whose-answer-is-lost).
     */
    async dial(request: CarrierDialRequest): Promise<{ providerCallId: string }> {
      const from = request.from;
      if (!from) throw new Error(`attempt ${request.attemptId}: a Twilio call needs its caller number`);
      const wanted = request.statusCallbackEvents ?? ['ringing', 'in-progress'];
      let call: { sid: string };
      try {
        call = await twilioRequest(() =>
          client.calls.create({
            to: request.to,
            from,
            url: urlOf('twiml', request.attemptId),
            method: 'POST',
            statusCallback: urlOf('status', request.attemptId),
            statusCallbackMethod: 'POST',
            statusCallbackEvent: [
              ...(wanted.includes('ringing') ? ['ringing'] : []),
              ...(wanted.includes('in-progress') ? ['answered'] : []),
              'completed',
            ],
            timeout: RING_TIMEOUT_MS / 1000,
            // Twilio ends the call itself at the product's longest call, as the lead's deadline assumes, or sooner at
            // the limit the request carries (a test call: the minutes its hold covers).
            timeLimit: Math.ceil((request.timeLimitMs ?? MAX_CALL_LENGTH_MS) / 1000),
            machineDetection: MACHINE_DETECTION,
            asyncAmd: 'true',
            asyncAmdStatusCallback: urlOf('amd', request.attemptId),
            asyncAmdStatusCallbackMethod: 'POST',
          }),
        );
      } catch (error) {
        if (error instanceof TwilioRequestError && error.status === 400 && INVALID_NUMBER_CODES.has(error.code))
          throw new CarrierRefusedNumberError(`Twilio refused ${request.to}: ${error.message} (${error.code})`);
        const refusal = error instanceof TwilioRequestError ? SETUP_REFUSALS.get(error.code) : undefined;
        if (refusal)
          throw new CarrierRefusedSetupError(
            refusal,
            refusal === 'destination_not_permitted' ? request.to : from,
            `Twilio error ${(error as TwilioRequestError).code}: ${(error as TwilioRequestError).message}`,
          );
        throw error;
      }
      return { providerCallId: call.sid };
    },

    fetch: fetchCall,

    /**
     * The call Twilio placed for an attempt whose dial answer was lost. Twilio cannot be asked by attempt id, so the
     * calls from the attempt's number to its lead's since it was recorded are listed (GET .../Calls.json by To, From
     * and StartTime>, and the queued ones, which have not started), the calls other attempts hold are set aside, and
     * the one left is the attempt's. None: Twilio never created it (the attempt may be dialed). More than one, or one
     * while another attempt to the same number from the same caller is dialing without a CallSid (whose call it may
     * be: its create answered late, or was lost too): the attempt refuses to dial (AmbiguousAttemptError) until a
     * callback, whose URL names the attempt, binds its call, or the other attempt records its own.
     */
    async findCallOfAttempt(attempt: {
      attemptId: string;
      to: string;
      from: string | null;
      recordedAt: Date;
      othersOf: (callSids: string[]) => Promise<{ held: Set<string>; unboundOthers: number }>;
    }): Promise<CarrierCallSnapshot | null> {
      if (!attempt.from) return null;
      const since = new Date(attempt.recordedAt.getTime() - TWILIO_CLOCK_SKEW_MS);
      const filter = { to: attempt.to, from: attempt.from, limit: 50 };
      const [started, queued] = await Promise.all([
        twilioRequest(() => client.calls.list({ ...filter, startTimeAfter: since })),
        twilioRequest(() => client.calls.list({ ...filter, status: 'queued' })),
      ]);
      const seen = new Map(
        [...started, ...queued]
          .filter((call) => call.direction === 'outbound-api' && call.dateCreated.getTime() >= since.getTime())
          .map((call) => [call.sid, call]),
      );
      const { held, unboundOthers } = await attempt.othersOf([...seen.keys()]);
      const mine = [...seen.values()].filter((call) => !held.has(call.sid));
      if (mine.length > 1 || (mine.length === 1 && unboundOthers > 0))
        throw new AmbiguousAttemptError(
          attempt.attemptId,
          mine.map((call) => call.sid),
        );
      return mine[0] ? snapshotOf(mine[0], attempt.attemptId) : null;
    },

    /**
     * Ends the call (POST .../Calls/{Sid}.json): Status=canceled while it is queued or ringing, completed once
     * answered. The recorded state may lag (a late or lost answered callback, or TELEPHONY_STATUS_CALLBACK_EVENTS
     * without in-progress), and Twilio leaves an in-progress call alone on canceled and answers 200: so the call's
     * status in the answer is read, and a call that is live with another status than the one sent (answered meanwhile)
     * is ended with that one. Twilio refuses the status that no longer fits with a 4xx: the call is then read instead.
     * One already ended is left as it is.
     */
    async hangup(callSid: string, knownState: string | null): Promise<void> {
      const statusFor = (state: string | null): 'completed' | 'canceled' =>
        state === 'in-progress' ? 'completed' : 'canceled';
      /** Sends the status; answers the call's state after it (null: Twilio does not know the call). */
      const send = async (status: 'completed' | 'canceled') => {
        try {
          const answer = await twilioRequest(() => client.calls(callSid).update({ status }));
          return carrierStateOfTwilio(answer.status as TwilioCallStatus);
        } catch (error) {
          const refused = restStatusOf(error);
          if (refused === undefined || refused >= 500) throw error;
          return (await fetchCall(callSid, ''))?.status ?? null;
        }
      };
      let sent = statusFor(knownState);
      // Twice at most: canceled then completed (a call answered meanwhile), or the reverse (a call not yet answered).
      for (let tries = 0; tries < 2; tries++) {
        const now = await send(sent);
        if (now === null || isTerminalCallState(now) || statusFor(now) === sent) return;
        sent = statusFor(now);
      }
    },

    /**
     * Makes a call in progress obey another TwiML document at once (POST .../Calls/{Sid}.json with Url), leaving what
     * it was doing (a Gather still listening included): the voicemail drop at a machine's beep. A call that has ended
     * meanwhile (Twilio refuses the redirect with a 4xx, e.g. 21220) is left alone: answers false.
     */
    async redirect(callSid: string, url: string): Promise<boolean> {
      try {
        await twilioRequest(() => client.calls(callSid).update({ url, method: 'POST' }));
        return true;
      } catch (error) {
        const status = restStatusOf(error);
        if (status !== undefined && status >= 400 && status < 500) return false;
        throw error;
      }
    },
  };
}
