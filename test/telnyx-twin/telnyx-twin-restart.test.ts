// The Telnyx twin stopped mid-call and started again on its database goes on with the call: its queued speech, the
// persona's answer, its end and the webhooks it owes (docs/features/carriers/twins.md#the-telnyx-twin).
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../support/database';
import { until } from '../support/until';
import {
  startTestTelnyxTwin,
  startWebhookReceiver,
  TELNYX_TWIN_CONNECTION_ID,
  telnyxTwinLog,
  telnyxTwinRecord,
  untilHungUp,
} from '../support/telnyx-twin';

describe('a Telnyx twin restarted mid-call', () => {
  it('carries the call on: its speech, the answer, its end, and every webhook at least once, a duplicate by its id', async () => {
    const { db } = await useTestDatabase();
    const receiver = await startWebhookReceiver();
    // 0.05: the callee hangs up after 30 s with nothing happening, 1.5 s here, which a loaded machine's test still beats
    // between the answer and its first command.
    const first = await startTestTelnyxTwin(db, { timeScale: 0.05 });
    const { data } = await first.client.calls.dial({
      connection_id: TELNYX_TWIN_CONNECTION_ID,
      to: '+14155550400',
      from: '+14155550000',
      webhook_url: receiver.url(),
    });
    const id = data!.call_control_id;
    await until(
      async () => receiver.of(id),
      (webhooks) => webhooks.some((webhook) => webhook.eventType === 'call.answered'),
      10_000,
    );
    await first.client.calls.actions.startTranscription(id, {});
    // 43 words: 17 s of speech, 860 ms; the twin stops while it is being said.
    await first.client.calls.actions.speak(id, {
      payload:
        'Hello, this is the first part of a long message that goes on for a while, and then it goes on a little ' +
        'longer still, so that there is time enough to stop the twin in the middle. Is now a good time?',
      voice: 'female',
    });
    // The receiver refuses what comes next: it stays owed across the restart.
    receiver.control.refuse = true;
    await until(
      async () => receiver.of(id),
      (webhooks) => webhooks.some((webhook) => webhook.eventType === 'call.speak.started'),
      10_000,
    );
    await first.close();
    const stoppedAt = Date.now();
    expect((await telnyxTwinRecord(db).call(id)).status).toBe('answered');
    await new Promise((resolve) => setTimeout(resolve, 200));
    receiver.control.refuse = false;

    const second = await startTestTelnyxTwin(db, { timeScale: 0.05 });
    await until(
      async () => receiver.of(id),
      (webhooks) => webhooks.some((webhook) => webhook.eventType === 'call.transcription'),
      10_000,
    );
    await second.client.calls.actions.hangup(id, {});
    const webhooks = await untilHungUp(receiver, id);
    expect(webhooks.map((webhook) => webhook.eventType)).toEqual([
      'call.initiated',
      'call.answered',
      'call.speak.started',
      'call.speak.ended',
      'call.transcription',
      'call.hangup',
    ]);
    expect(webhooks.every((webhook) => webhook.verified && webhook.problems.length === 0)).toBe(true);
    // Refused deliveries were sent again: more arrived than there are events, each copy with the same id.
    const copies = receiver.received.filter((webhook) => webhook.payload.call_control_id === id);
    expect(copies.length).toBeGreaterThan(webhooks.length);
    expect(copies.some((webhook) => webhook.at >= stoppedAt)).toBe(true);
    const { log } = await telnyxTwinLog(second.baseUrl, id);
    expect(log.filter((entry) => entry.kind === 'speech')).toHaveLength(1);
  });
});
