import { APIError } from 'telnyx';
import { CarrierRefusedNumberError, type CarrierCallSnapshot, type CarrierDialRequest } from '../../calls/carrier';
import { MAX_CALL_LENGTH_MS, RING_TIMEOUT_MS } from '../../calls/call-deadline';
import type { CarrierCallState } from '../../calls/call-states';
import { telnyxClientOf, type TelnyxConnection } from './telnyx-client';
import { encodeClientState, type TelnyxSpeak } from './telnyx-script';
import { telnyxWebhookUrl } from './telnyx-urls';

/**
 * Answering-machine detection that reports a machine's greeting's end (call.machine.greeting.ended, beep or silence),
 * so that a message can be left after it; a person is told by call.machine.detection.ended.
 */
export const TELNYX_MACHINE_DETECTION = 'greeting_end';

/** The command_id of the product's hang-up of a call: sent twice (a retry, a stop and the script's end), done once. */
export const HANGUP_COMMAND_ID = 'hangup';

/** The command_ids of a call's one conversation and its one transfer: commanded again, done once. */
export const CONVERSATION_RELAY_COMMAND_ID = 'conversation-relay';
export const TRANSFER_COMMAND_ID = 'transfer';
/** A warm transfer's bridge of the lead's call to the human's leg: commanded again (a webhook redelivered), done once. */
export const BRIDGE_COMMAND_ID = 'bridge';

/** What a call's ConversationRelay session is started with (docs/features/conversation/relay.md#telnyx). */
export interface TelnyxRelayStart {
  /** ws(s)://.../relay?token=... (telnyx-urls.ts telnyxRelayUrl). */
  url: string;
  /** Said by Telnyx when the session starts: the disclosure and the opening line. */
  greeting: string;
  language: string;
  voice: string;
  hints: string[];
  attemptId: string;
}

/** A transfer of the call to a human (docs/features/conversation/tools.md#transfer_to_human). */
export interface TelnyxTransfer {
  to: string;
  from: string | null;
  timeoutSecs: number;
  /** Where the human's leg's webhooks go: the call's own webhook URL. */
  webhookUrl: string;
  /** The human's leg's client_state (`human`), telling its webhooks from the lead's. */
  targetLegClientState: string;
}

/** A warm transfer's dial of the human (docs/features/conversation/tools.md#warm-transfer): a new call of its own. */
export interface TelnyxHumanDial {
  attemptId: string;
  /** The lead's call: the human's leg shares its session (link_to) and is to be bridged to it (bridge_intent). */
  leadCallControlId: string;
  to: string;
  from: string;
  timeoutSecs: number;
  /** Where the human's leg's webhooks go: the lead's call's own webhook URL. */
  webhookUrl: string;
  /** The human's leg's client_state (`human`), telling its webhooks from the lead's. */
  clientState: string;
}

/**
 * What a request to Telnyx failed with, and nothing more: Telnyx's answer (its HTTP status, its first error's code), or
 * the network's. The SDK's own errors are not let through, so that nothing of the request (its Bearer key) can reach a
 * log of a failed activity.
 */
export class TelnyxRequestError extends Error {
  constructor(
    message: string,
    /** Telnyx's HTTP status; undefined when no answer came. */
    readonly status: number | undefined,
    /** Telnyx's error code (10016, 90018...). */
    readonly code: string | undefined,
    /** The parameter Telnyx names (its source.pointer). */
    readonly pointer: string | undefined,
  ) {
    super(message);
    this.name = 'TelnyxRequestError';
  }
}

function requestErrorOf(error: unknown): TelnyxRequestError {
  const status = error instanceof APIError ? (error.status as number | undefined) : undefined;
  if (error instanceof APIError && status !== undefined) {
    const first = (
      error.error as { errors?: Array<{ code?: unknown; detail?: unknown; source?: { pointer?: unknown } }> }
    )?.errors?.[0];
    return new TelnyxRequestError(
      `Telnyx answered ${status}${typeof first?.detail === 'string' ? `: ${first.detail}` : ''}`,
      status,
      typeof first?.code === 'string' ? first.code : undefined,
      typeof first?.source?.pointer === 'string' ? first.source.pointer : undefined,
    );
  }
  // The network's failure: fetch's TypeError holds the system error (ECONNRESET...) as its cause.
  let cause: unknown = error;
  let code: string | undefined;
  for (let depth = 0; depth < 4 && cause && typeof cause === 'object' && code === undefined; depth++) {
    const found = (cause as { code?: unknown }).code;
    if (typeof found === 'string' && /^E[A-Z_]+$/.test(found)) code = found;
    cause = (cause as { cause?: unknown }).cause;
  }
  return new TelnyxRequestError(`Telnyx request failed${code ? ` (${code})` : ''}`, undefined, code, undefined);
}

/** One request to Telnyx; a failure rethrown as a TelnyxRequestError (no request, no key in it). */
export async function telnyxRequest<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw requestErrorOf(error);
  }
}

/** Telnyx refuses a command because the call has ended (90018) or is not (any longer) there (404): nothing to do. */
const callGone = (error: unknown) =>
  error instanceof TelnyxRequestError && (error.status === 404 || (error.status === 422 && error.code === '90018'));

/** Telnyx's refusals of the number itself at a dial: `to` not E.164 (10016), or another fault Telnyx names `to` by. */
const refusesNumber = (error: TelnyxRequestError) =>
  error.status === 422 && (error.code === '10016' || error.pointer === '/to') && error.pointer !== '/from';

/**
 * One Telnyx account's calls, through the official SDK on Call Control (docs/features/carriers/telnyx.md). Built per
 * operation from the call's connection, opened in the worker (dial, lookup, hang-up) or the API (the script walk's
 * commands); nothing is kept between calls.
 */
export function createTelnyxCalls(connection: TelnyxConnection, { publicBaseUrl }: { publicBaseUrl: string }) {
  const client = telnyxClientOf(connection);
  /** A command on a call that may have ended meanwhile: false when Telnyx says it has (nothing to do). */
  const command = async (send: () => Promise<unknown>): Promise<boolean> => {
    try {
      await telnyxRequest(send);
      return true;
    } catch (error) {
      if (callGone(error)) return false;
      throw error;
    }
  };

  return {
    /**
     * Places the call (POST /calls, DialCall). `command_id` is the attempt id, so that a dial sent again for the same
     * attempt (its answer lost, the activity retried) is ignored by Telnyx rather than placing a second call;
     * `client_state` is the attempt id too (base64), which every webhook of the call carries; the webhook URL names
     * the connection and the attempt. What a repeated dial answers is not documented by Telnyx: the twin answers the
     * call it placed, and otherwise the first webhook binds the call to the attempt (docs: a dial whose answer is lost).
     */
    async dial(request: CarrierDialRequest): Promise<{ providerCallId: string }> {
      const from = request.from;
      if (!from) throw new Error(`attempt ${request.attemptId}: a Telnyx call needs its caller number`);
      let answer: Awaited<ReturnType<typeof client.calls.dial>>;
      try {
        answer = await telnyxRequest(() =>
          client.calls.dial({
            connection_id: connection.connectionId,
            to: request.to,
            from,
            webhook_url: telnyxWebhookUrl(publicBaseUrl, { connectionId: connection.id, attemptId: request.attemptId }),
            webhook_url_method: 'POST',
            client_state: encodeClientState({ attemptId: request.attemptId }),
            command_id: request.attemptId,
            timeout_secs: RING_TIMEOUT_MS / 1000,
            // Telnyx ends the call itself at the product's longest call, as the lead's deadline assumes, or sooner at
            // the limit the request carries (a test call: the minutes its hold covers; Telnyx takes 30 s at least).
            time_limit_secs: Math.max(30, Math.ceil((request.timeLimitMs ?? MAX_CALL_LENGTH_MS) / 1000)),
            answering_machine_detection: TELNYX_MACHINE_DETECTION,
          }),
        );
      } catch (error) {
        if (error instanceof TelnyxRequestError && refusesNumber(error))
          throw new CarrierRefusedNumberError(`Telnyx refused ${request.to}: ${error.message} (${error.code})`);
        throw error;
      }
      const id = answer.data?.call_control_id;
      if (!id)
        throw new TelnyxRequestError('Telnyx answered the dial without a call_control_id', 200, undefined, undefined);
      return { providerCallId: id };
    },

    /**
     * The call as Telnyx has it now (GET /calls/{call_control_id}, RetrieveCallStatus); null when Telnyx does not know
     * it (404). Telnyx tells only whether the call is alive: a live call keeps the state last heard of (`knownState`,
     * never moved backwards); an ended one is completed with its call_duration when it was answered, else no-answer.
     */
    async fetch(
      callControlId: string,
      attemptId: string,
      knownState: CarrierCallState | null = null,
    ): Promise<CarrierCallSnapshot | null> {
      let data;
      try {
        ({ data } = await telnyxRequest(() => client.calls.retrieveStatus(callControlId)));
      } catch (error) {
        if (error instanceof TelnyxRequestError && error.status === 404) return null;
        throw error;
      }
      if (!data) return null;
      const answered = typeof data.call_duration === 'number';
      const status: CarrierCallState = data.is_alive ? (knownState ?? 'queued') : answered ? 'completed' : 'no-answer';
      return {
        providerCallId: callControlId,
        attemptId,
        status,
        answeredBy: null,
        durationMs: !data.is_alive && answered ? data.call_duration! * 1000 : null,
        reason: null,
      };
    },

    /**
     * Answers a call placed to one of the account's numbers (actions/answer, AnswerCall: docs/features/carriers/inbound.md),
     * naming the call's own webhook URL and client_state, as a dial does, so that its later webhooks reach the call's
     * route; its command_id is the attempt, so that an answer sent again is done once. False: the caller hung up first.
     */
    async answer(callControlId: string, attemptId: string): Promise<boolean> {
      return command(() =>
        client.calls.actions.answer(callControlId, {
          command_id: `answer:${attemptId}`,
          client_state: encodeClientState({ attemptId }),
          webhook_url: telnyxWebhookUrl(publicBaseUrl, { connectionId: connection.id, attemptId }),
          webhook_url_method: 'POST',
        }),
      );
    },

    /**
     * Ends the call (actions/hangup, with a command_id: the stop's hang-up and the script's are one command to Telnyx).
     * A call that has already ended (422 90018, or 404) is left as it is.
     */
    async hangup(callControlId: string): Promise<void> {
      await command(() => client.calls.actions.hangup(callControlId, { command_id: HANGUP_COMMAND_ID }));
    },

    /** Says a text on the call (actions/speak); false when the call has ended. */
    speak(callControlId: string, speak: TelnyxSpeak): Promise<boolean> {
      return command(() =>
        client.calls.actions.speak(callControlId, {
          payload: speak.payload,
          ...(speak.payloadType && { payload_type: speak.payloadType }),
          voice: speak.voice,
          language: speak.language as never,
          command_id: speak.commandId,
          ...(speak.clientState && { client_state: speak.clientState }),
        }),
      );
    },

    /**
     * Hands the answered call to ConversationRelay (actions/conversation_relay_start, CallStartConversationRelay):
     * Telnyx says the greeting, opens the socket and carries the conversation as text; call.conversation.ended tells
     * when the session is over. Once per call (its command_id). False when the call has ended.
     */
    startConversationRelay(callControlId: string, relay: TelnyxRelayStart): Promise<boolean> {
      return command(() =>
        client.calls.actions.startConversationRelay(callControlId, {
          url: relay.url,
          ...(relay.greeting && { greeting: relay.greeting }),
          language: relay.language,
          voice: relay.voice,
          transcription_engine: 'Google',
          transcription_engine_config: { hints: relay.hints },
          interruptible: 'speech',
          custom_parameters: { attemptId: relay.attemptId },
          command_id: CONVERSATION_RELAY_COMMAND_ID,
        }),
      );
    },

    /**
     * Dials the human and bridges the lead to them (actions/transfer, TransferCall), ringing at most timeoutSecs: the
     * human's leg's webhooks (call.answered, or call.hangup when nobody answered) come to the call's webhook URL with
     * the `human` client_state; an unanswered transfer leaves the lead's call on. Once per call (its command_id).
     * False when the call has ended.
     */
    transfer(callControlId: string, transfer: TelnyxTransfer): Promise<boolean> {
      return command(() =>
        client.calls.actions.transfer(callControlId, {
          to: transfer.to,
          ...(transfer.from && { from: transfer.from }),
          timeout_secs: transfer.timeoutSecs,
          webhook_url: transfer.webhookUrl,
          webhook_url_method: 'POST',
          target_leg_client_state: transfer.targetLegClientState,
          command_id: TRANSFER_COMMAND_ID,
        }),
      );
    },

    /**
     * A warm transfer's dial of the human as a call of its own (POST /calls, DialCall, on the connection), linked to the
     * lead's call (link_to: the same call session; bridge_intent: to be bridged to it, from its caller number), ringing
     * at most timeoutSecs; its webhooks (call.answered, call.speak.ended, call.hangup) come to the lead's call's webhook
     * URL with the `human` client_state. Its command_id is the attempt's, so that a dial sent again (the webhook that
     * asked for it delivered again) places no second call. Answers the human's leg's call_control_id.
     */
    async dialHuman(dial: TelnyxHumanDial): Promise<string | null> {
      const answer = await telnyxRequest(() =>
        client.calls.dial({
          connection_id: connection.connectionId,
          to: dial.to,
          from: dial.from,
          webhook_url: dial.webhookUrl,
          webhook_url_method: 'POST',
          client_state: dial.clientState,
          command_id: `${dial.attemptId}:human`,
          timeout_secs: dial.timeoutSecs,
          link_to: dial.leadCallControlId,
          bridge_intent: true,
        }),
      );
      return answer.data?.call_control_id ?? null;
    },

    /**
     * Bridges the lead's call to the human's leg (actions/bridge, BridgeCall) once the human has heard the summary;
     * once per call (its command_id). When either hangs up, Telnyx hangs up the other (no park_after_unbridge). False
     * when Telnyx refuses it (a leg has ended meanwhile: the human's hang-up then tells the lead).
     */
    async bridge(leadCallControlId: string, humanCallControlId: string): Promise<boolean> {
      try {
        return await command(() =>
          client.calls.actions.bridge(leadCallControlId, {
            call_control_id_to_bridge_with: humanCallControlId,
            command_id: BRIDGE_COMMAND_ID,
          }),
        );
      } catch (error) {
        if (error instanceof TelnyxRequestError && error.status === 422) return false;
        throw error;
      }
    },

    /**
     * Starts listening (actions/transcription_start): each final utterance comes back as call.transcription, and the
     * words heard so far meanwhile (interim results, is_final false: api/carriers/telnyx-question-waits.ts). Google's
     * engine, in the agent's language (its primary subtag, as Telnyx lists Google's), with the hints. Once per call
     * (its command_id): Telnyx refuses a second start (90054), taken as already listening.
     */
    async startTranscription(callControlId: string, options: { language: string; hints: string[] }): Promise<boolean> {
      try {
        return await command(() =>
          client.calls.actions.startTranscription(callControlId, {
            command_id: 'transcription',
            transcription_engine: 'Google',
            transcription_engine_config: {
              transcription_engine: 'Google',
              language: options.language.split('-')[0]!.toLowerCase() as never,
              hints: options.hints,
              // The words as they are heard: speech has begun, so a question's wait for its answer is not over.
              interim_results: true,
            },
          }),
        );
      } catch (error) {
        if (error instanceof TelnyxRequestError && error.code === '90054') return true;
        throw error;
      }
    },
  };
}
