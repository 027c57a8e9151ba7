// The Twilio twin stopped mid-call and started again on its database goes on with the call: its program, its clock
// and the callbacks it owes (docs/features/carriers/twins.md#the-twilio-twin).
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../support/database';
import { until } from '../support/until';
import {
  ended,
  startProductStandIn,
  startTestTwilioTwin,
  twilioTwinRecord,
  twiml,
  twinLog,
} from '../support/twilio-twin';

describe('a twin restarted mid-call', () => {
  it('carries the call on: the rest of its TwiML, its end and its callbacks, a duplicate recognisable by CallSid and SequenceNumber', async () => {
    const { db } = await useTestDatabase();
    const product = await startProductStandIn();
    // A receiver down for the first answers: the callbacks owed stay owed across the restart.
    let refuse = true;
    product.routes.set('/status', () => (refuse ? { status: 503 } : { status: 204 }));
    product.routes.set('/start', () =>
      twiml(
        '<Say>Hello, this is the first part.</Say><Pause length="10"/><Gather input="speech" action="/answer"><Say>Is now a good time?</Say></Gather>',
      ),
    );
    product.routes.set('/answer', () => twiml('<Say>Thank you, goodbye.</Say>'));
    // 1 simulated second is 10 ms: the call is in its Pause for 100 ms.
    const first = await startTestTwilioTwin(db, { timeScale: 0.01 });
    const call = await first.client.calls.create({
      to: '+14155550400',
      from: '+14155550000',
      url: `${product.baseUrl}/start`,
      statusCallback: `${product.baseUrl}/status`,
      statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
    });
    await until(
      async () => product.at('/start'),
      (requests) => requests.length === 1,
      10_000,
    );
    await first.close();
    const stoppedAt = Date.now();
    expect((await twilioTwinRecord(db).call(call.sid)).status).toBe('in-progress');
    await new Promise((resolve) => setTimeout(resolve, 150));
    refuse = false;

    const second = await startTestTwilioTwin(db, { timeScale: 0.01 });
    const done = await ended(second.client, call.sid);
    expect(done.status).toBe('completed');
    expect(product.at('/start')).toHaveLength(1);
    expect(product.at('/answer')).toHaveLength(1);
    expect(product.at('/answer')[0]!.params.SpeechResult).toBeTruthy();
    const statuses = await until(
      async () => product.at('/status').filter((request) => request.params.CallSid === call.sid),
      (received) => received.some((request) => request.params.CallStatus === 'completed'),
      10_000,
    );
    // Every event arrived at least once, each valid; retried ones carry the same SequenceNumber.
    const bySequence = new Map(statuses.map((request) => [request.params.SequenceNumber, request.params.CallStatus]));
    expect([...bySequence.entries()].sort()).toEqual([
      ['0', 'initiated'],
      ['1', 'ringing'],
      ['2', 'in-progress'],
      ['3', 'completed'],
    ]);
    expect(statuses.every((request) => request.valid)).toBe(true);
    expect(statuses.length).toBeGreaterThan(4);
    const delivered = statuses.filter((request) => request.at >= stoppedAt);
    expect(delivered.length).toBeGreaterThan(0);
    const { log } = await twinLog(second.baseUrl, call.sid);
    expect(log.filter((entry) => entry.kind === 'say').map((entry) => entry.text)).toEqual([
      'Hello, this is the first part.',
      'Is now a good time?',
      'Thank you, goodbye.',
    ]);
  });
});
