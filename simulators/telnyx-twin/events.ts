import { randomUUID } from 'node:crypto';

/** Telnyx's webhook envelope: `data` holding the event's type, its own id, when it occurred and the call's payload. */
export const eventOf = <Payload extends object>(eventType: string, occurredAt: Date, payload: Payload) => ({
  data: {
    event_type: eventType,
    id: randomUUID(),
    occurred_at: occurredAt.toISOString(),
    payload,
    record_type: 'event',
  },
});
