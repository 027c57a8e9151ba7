import { TWILIO_TWIN_ACCOUNT_SID } from '../lib/carriers/twin';

/**
 * A status callback's form as Twilio posts it for a call of the twin's development account: its identity, its status
 * and its place among the call's callbacks. One shape for the benches that sign and send them.
 */
export const twilioStatusForm = (callSid: string, status: 'ringing' | 'in-progress', sequence: number) => ({
  AccountSid: TWILIO_TWIN_ACCOUNT_SID,
  ApiVersion: '2010-04-01',
  CallSid: callSid,
  CallStatus: status,
  Direction: 'outbound-api',
  From: '+14155550999',
  To: '+14155550120',
  SequenceNumber: String(sequence),
  Timestamp: new Date().toUTCString(),
});
