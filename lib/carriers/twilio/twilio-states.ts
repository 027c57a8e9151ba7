import { failureReasonOfSip } from '../sip';
import type { CarrierCallState } from '../../calls/call-states';

/**
 * Twilio's words for a call's state and who answered it, and what they are in the product
 * (docs/features/carriers/twilio.md#outcomes-twilios-words-in-the-products): the carrier states of
 * lib/calls/call-states.ts, from which lib/calls/call-end.ts derives the outcome.
 */
export const TWILIO_CALL_STATUSES = [
  'queued',
  'initiated',
  'ringing',
  'in-progress',
  'completed',
  'busy',
  'no-answer',
  'failed',
  'canceled',
] as const;
export type TwilioCallStatus = (typeof TWILIO_CALL_STATUSES)[number];

/**
 * initiated (Twilio has taken the call off its queue and dials) is still queued to the product: nothing about the
 * call has changed that the product acts on, and the rank of queued lets the initiated callback bind the CallSid to
 * an attempt whose dial answer was lost. The other statuses have the same name in both.
 */
export function carrierStateOfTwilio(status: TwilioCallStatus): CarrierCallState {
  return status === 'initiated' ? 'queued' : status;
}

export const TWILIO_ANSWERED_BY = [
  'human',
  'machine_start',
  'machine_end_beep',
  'machine_end_silence',
  'machine_end_other',
  'fax',
  'unknown',
] as const;
export type TwilioAnsweredBy = (typeof TWILIO_ANSWERED_BY)[number];

/**
 * human -> human; machine_* -> machine (voicemail); fax -> machine (no person will speak: the call is not an
 * answered conversation, and a second rung to a fax line would reach the same machine); unknown -> null (the outcome
 * is then answered, as for a call without detection). Any value Twilio may add later is unknown.
 */
export function answeredByOfTwilio(answeredBy: string | null | undefined): 'human' | 'machine' | null {
  if (answeredBy === 'human') return 'human';
  if (answeredBy === 'fax' || answeredBy?.startsWith('machine_')) return 'machine';
  return null;
}

/** Why a failed call failed, from the SIP response code Twilio reports with it (lib/carriers/sip.ts). */
export const failureReasonOfTwilio = failureReasonOfSip;
