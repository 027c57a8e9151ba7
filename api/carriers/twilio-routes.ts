import type { Response } from 'express';
import { z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import {
  TWILIO_SIGNATURE_HEADER,
  twilioAmdCallbackSchema,
  twilioRecordingCallbackSchema,
  twilioStatusCallbackSchema,
} from '../../lib/carriers/twilio/twilio-callbacks';
import { TWILIO_CALL_ROUTE } from '../../lib/carriers/twilio/twilio-urls';
import { defineRoute, FORM_MEDIA_TYPE } from '../http/route';
import {
  assertSignedByTwilio,
  receiveTwilioAmd,
  receiveTwilioStatus,
  twilioCallTwiml,
  twilioTwimlRequestSchema,
  verifiedConnectionOf,
} from './twilio-callbacks';
import { receiveTwilioRecording } from './twilio-recordings';
import {
  relayEndedRequestSchema,
  transferEndedRequestSchema,
  transferWhisperRequestSchema,
  twilioRelayEnded,
  twilioTransferEnded,
  twilioTransferWhisper,
} from './twilio-transfer';

const params = z.object({
  connectionId: z
    .string()
    .describe('The carrier connection the call was placed through: its auth token checks the signature.'),
  attemptId: z.string().describe('The attempt the call was dialed for (the dial put it in the URL).'),
});

export const signatureHeader = [
  {
    name: TWILIO_SIGNATURE_HEADER,
    description:
      "base64 HMAC-SHA1, with the connection's auth token, of the URL Twilio called (PUBLIC_BASE_URL + path and query) " +
      "followed by each form parameter, sorted by name, as name and value (Twilio's request validation).",
  },
];

const received = z.object({
  received: z.literal(true),
  applied: z.boolean().describe('false: a duplicate, late or out-of-order callback, which changed nothing.'),
});

const errors = { 401: [ErrorCode.invalid_signature], 404: [ErrorCode.unknown_call] };

/** What the routes of Twilio's status callbacks share (a call's, a number's): public, signed, the callback's form. */
export const statusCallbackRoute = {
  access: { public: true as const },
  tags: ['Telephony'],
  headerParameters: signatureHeader,
  body: twilioStatusCallbackSchema,
  bodyMediaType: FORM_MEDIA_TYPE as typeof FORM_MEDIA_TYPE,
  beforeValidation: assertSignedByTwilio,
  responses: {
    200: { description: 'The callback is recorded (or was already): the change is committed.', schema: received },
  },
  errors,
};

/** What the TwiML routes (the answer and the script walk's steps) share: signed like the callbacks, a form in, TwiML out. */
const twimlRoute = {
  access: { public: true as const },
  tags: ['Telephony'],
  headerParameters: signatureHeader,
  body: twilioTwimlRequestSchema,
  bodyMediaType: FORM_MEDIA_TYPE as typeof FORM_MEDIA_TYPE,
  beforeValidation: assertSignedByTwilio,
  responses: { 200: { description: 'A TwiML document.', contentType: 'text/xml', schema: z.string() } },
  errors,
};

/** Written here: the route table answers JSON otherwise. */
export function sendTwiml(res: Response, twiml: string) {
  res.status(200).type('text/xml').send(twiml);
  return { status: 200 as const };
}

/** Twilio's requests for a call placed through a Twilio connection (docs/features/carriers/twilio.md#twilio-callbacks). */
export const twilioRoutes = [
  defineRoute({
    method: 'post',
    path: `${TWILIO_CALL_ROUTE}/status`,
    summary:
      "Twilio's status callback of a call (StatusCallback: initiated, ringing, answered, completed), form-encoded. " +
      'Public: authenticated by X-Twilio-Signature. Idempotent by CallSid and SequenceNumber; a call never moves backwards.',
    ...statusCallbackRoute,
    params,
    handler: async ({ services, req, params, body }) => ({
      status: 200,
      body: await receiveTwilioStatus(services, req, params.attemptId, body),
    }),
  }),
  defineRoute({
    method: 'post',
    path: `${TWILIO_CALL_ROUTE}/amd`,
    access: { public: true },
    summary:
      "Twilio's asynchronous answering-machine detection result of a call (AsyncAmdStatusCallback), form-encoded: who " +
      'answered. Public: authenticated by X-Twilio-Signature. Once per call; a result after the call ended changes nothing.',
    tags: ['Telephony'],
    params,
    headerParameters: signatureHeader,
    body: twilioAmdCallbackSchema,
    bodyMediaType: FORM_MEDIA_TYPE,
    beforeValidation: assertSignedByTwilio,
    responses: { 200: { description: 'The result is recorded (or was already).', schema: received } },
    errors,
    handler: async ({ services, req, params, body }) => ({
      status: 200,
      body: await receiveTwilioAmd(services, req, params.attemptId, body),
    }),
  }),
  defineRoute({
    method: 'post',
    path: `${TWILIO_CALL_ROUTE}/recording`,
    access: { public: true },
    summary:
      "Twilio's recording status callback of a call the product records (RecordingStatusCallback, " +
      'docs/features/recordings.md#twilio), form-encoded: completed (with RecordingDuration and RecordingChannels), ' +
      'absent or failed. Public: authenticated by X-Twilio-Signature. Once: a repeated callback changes nothing.',
    tags: ['Telephony'],
    params,
    headerParameters: signatureHeader,
    body: twilioRecordingCallbackSchema,
    bodyMediaType: FORM_MEDIA_TYPE,
    beforeValidation: assertSignedByTwilio,
    responses: { 200: { description: 'The recording status is recorded (or was already).', schema: received } },
    errors,
    handler: async ({ services, req, params, body }) => ({
      status: 200,
      body: await receiveTwilioRecording(services, verifiedConnectionOf(req), params.attemptId, body),
    }),
  }),
  defineRoute({
    method: 'post',
    path: `${TWILIO_CALL_ROUTE}/twiml`,
    summary:
      "The TwiML Twilio obeys once the call is answered (Url): the agent's opening line and first question (a speech " +
      'Gather whose action is .../twiml/1). Public: authenticated by X-Twilio-Signature, like the callbacks. With ' +
      'AnsweredBy machine_end_* (synchronous detection): the voicemail message.',
    ...twimlRoute,
    params,
    handler: async ({ services, req, res, params, body }) =>
      sendTwiml(res, await twilioCallTwiml(services, req, params.attemptId, { kind: 'answer' }, body)),
  }),
  defineRoute({
    method: 'post',
    path: `${TWILIO_CALL_ROUTE}/twiml/{step}`,
    summary:
      "A step of the agent's script walk (docs/features/carriers/twilio.md#the-script-walk): the action of question {step}'s " +
      'speech Gather, with the SpeechResult and Confidence Twilio heard (none: the lead said nothing), stored once per ' +
      'call and step as a turn of the transcript; answers the next question, or the closing and <Hangup/>. {step} ' +
      "voicemail: the machine's greeting has ended (the detection's redirect): the voicemail message, then <Hangup/>. " +
      'Public: authenticated by X-Twilio-Signature. A replayed or out-of-order request adds and reorders nothing.',
    ...twimlRoute,
    params: params.extend({
      step: z
        .string()
        .regex(/^([1-9][0-9]{0,2}|voicemail)$/)
        .describe("A question's number (1 to the script's questions), or voicemail."),
    }),
    handler: async ({ services, req, res, params, body }) =>
      sendTwiml(
        res,
        await twilioCallTwiml(
          services,
          req,
          params.attemptId,
          params.step === 'voicemail' ? { kind: 'voicemail' } : { kind: 'step', step: Number(params.step) },
          body,
        ),
      ),
  }),
  defineRoute({
    method: 'post',
    path: `${TWILIO_CALL_ROUTE}/relay-ended`,
    summary:
      "<Connect>'s action once the call's ConversationRelay conversation ends (docs/features/conversation/tools.md): " +
      "a <Dial> of the agent's transfer number when transfer_to_human asked for it, else <Hangup/>. Public: " +
      'authenticated by X-Twilio-Signature. Changes nothing: a repeated request answers the same.',
    ...twimlRoute,
    body: relayEndedRequestSchema,
    params,
    handler: async ({ services, req, res, params }) =>
      sendTwiml(res, await twilioRelayEnded(services, req, params.attemptId)),
  }),
  defineRoute({
    method: 'post',
    path: `${TWILIO_CALL_ROUTE}/transfer-whisper`,
    summary:
      "A warm transfer's <Number url> (docs/features/conversation/tools.md#warm-transfer): Twilio asks it once the " +
      'human answers, and plays its <Say> to the human alone before connecting them to the lead: the call announced ' +
      "and its summary (transfer_to_human's). Public: authenticated by X-Twilio-Signature. Changes nothing: a " +
      'repeated request answers the same.',
    ...twimlRoute,
    body: transferWhisperRequestSchema,
    params,
    handler: async ({ services, req, res, params }) =>
      sendTwiml(res, await twilioTransferWhisper(services, req, params.attemptId)),
  }),
  defineRoute({
    method: 'post',
    path: `${TWILIO_CALL_ROUTE}/transfer-ended`,
    summary:
      "The transfer <Dial>'s action (docs/features/conversation/tools.md#transfer_to_human): DialCallStatus completed " +
      'ends the call transferred (<Hangup/>); otherwise the lead is told nobody could take the call and the call ends ' +
      "callback_requested, for the ladder's next rung. Public: authenticated by X-Twilio-Signature.",
    ...twimlRoute,
    body: transferEndedRequestSchema,
    params,
    handler: async ({ services, req, res, params, body }) =>
      sendTwiml(res, await twilioTransferEnded(services, req, params.attemptId, body)),
  }),
];
