// Telnyx Call Control webhook deliveries as its description shows them (vendor/openapi/telnyx/), for the tests of
// docs/features/carriers/conformance.md.

export const TELNYX_CALL_CONTROL_ID = 'v3:MdI91X4lWFEs7IgbBEOT9M4AigoY08M0WWZFISt1Yw2axZ_IiE4pqg';

/**
 * One webhook of an outbound call placed with client_state `att_1`: `{ data: { event_type, payload } }`, the
 * payload holding the call's ids and numbers and then the event's own members.
 */
export function telnyxCallEvent<T extends Record<string, unknown>>(eventType: string, members: T, occurredAt: string) {
  return {
    data: {
      event_type: eventType,
      id: '0ccc7b54-4df3-4bca-a65a-3da1ecc777f0',
      occurred_at: occurredAt,
      record_type: 'event',
      payload: {
        call_control_id: TELNYX_CALL_CONTROL_ID,
        call_leg_id: '428c31b6-7af4-4bcb-b7f5-5013ef9657c1',
        call_session_id: '428c31b6-abf3-3bc1-b7f4-5013ef9657c1',
        client_state: Buffer.from('att_1').toString('base64'),
        connection_id: '1684641123236054244',
        from: '+15017122661',
        to: '+15558675310',
        ...members,
      },
    },
  };
}

/** The hang-up of an answered call the callee ended. */
export const telnyxHangupEvent = (occurredAt = '2026-11-27T08:00:42.521992Z') =>
  telnyxCallEvent(
    'call.hangup',
    {
      hangup_cause: 'normal_clearing',
      hangup_source: 'callee',
      sip_hangup_cause: '200',
      start_time: '2026-11-27T08:00:00.000000Z',
      state: 'hangup',
    },
    occurredAt,
  );
