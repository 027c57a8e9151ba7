import type { CarrierCallState } from '../../calls/call-states';
import { failureReasonOfSip } from '../sip';

/**
 * Telnyx's words for how a call ended and who answered it, and what they are in the product
 * (docs/features/carriers/telnyx.md#outcomes-telnyxs-words-in-the-products): the carrier states of lib/calls/call-states.ts,
 * from which lib/calls/call-end.ts derives the outcome, as for Twilio's.
 */

/** call.hangup's hangup_cause, as the vendored description lists them, and the ones Telnyx's documentation adds. */
export const TELNYX_HANGUP_CAUSES = [
  'call_rejected',
  'normal_clearing',
  'originator_cancel',
  'timeout',
  'time_limit',
  'user_busy',
  'not_found',
  'no_answer',
  'unspecified',
] as const;

/**
 * A call.hangup as the product's end: its carrier state, and why a failed call failed.
 * - normal_clearing, time_limit: completed (answered, or voicemail when a machine answered);
 * - user_busy: busy; call_rejected (the person declined the ringing call): busy, as Twilio reports a declined call;
 * - timeout, no_answer: no-answer;
 * - originator_cancel (the product hung up, a stopped campaign): canceled (what the call had reached);
 * - not_found, unallocated_number, invalid_number_format: failed, invalid_number;
 * - anything else (unspecified, a cause Telnyx adds later): failed, invalid_number when the SIP code says the number
 *   does not exist (404, 410, 484, 604), else carrier_error.
 */
export function endOfTelnyxHangup(
  cause: string,
  sipHangupCause: string | null | undefined,
): { status: CarrierCallState; reason: string | null } {
  switch (cause) {
    case 'normal_clearing':
    case 'time_limit':
      return { status: 'completed', reason: null };
    case 'user_busy':
    case 'call_rejected':
      return { status: 'busy', reason: null };
    case 'timeout':
    case 'no_answer':
      return { status: 'no-answer', reason: null };
    case 'originator_cancel':
      return { status: 'canceled', reason: null };
    case 'not_found':
    case 'unallocated_number':
    case 'invalid_number_format':
      return { status: 'failed', reason: 'invalid_number' };
    default:
      return { status: 'failed', reason: failureReasonOfSip(sipHangupCause) };
  }
}

/**
 * Who answered, by answering-machine detection's result: standard (call.machine.detection.ended) human, machine,
 * not_sure; premium (call.machine.premium.detection.ended) human_residence, human_business, machine, silence,
 * fax_detected. human_* -> human; machine and fax_detected -> machine (no person will talk); not_sure, silence and
 * anything new -> not known (null: a completed call is then answered).
 */
export function answeredByOfTelnyx(result: string | null | undefined): 'human' | 'machine' | null {
  if (result === 'human' || result?.startsWith('human_')) return 'human';
  if (result === 'machine' || result === 'fax_detected') return 'machine';
  return null;
}
