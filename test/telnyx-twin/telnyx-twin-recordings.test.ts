// The Telnyx twin's call recordings (docs/features/carriers/twins.md#recordings) through the official `telnyx` SDK,
// every request, answer and webhook checked against Telnyx's vendored description: record_start on an answered call,
// the signed call.recording.saved at its end, the recordings listed by call and read, their real audio at a download
// URL that needs no key but its signature, and their deletion.
import Telnyx from 'telnyx';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../support/database';
import { soxInfo } from '../support/recordings';
import {
  clientState,
  exchangeProblems,
  OTHER_ACCOUNT,
  startTestTelnyxTwin,
  startWebhookReceiver,
  TELNYX_TWIN_CONNECTION_ID,
  untilHungUp,
} from '../support/telnyx-twin';
import { until } from '../support/until';

const { db } = await useTestDatabase();
// 1 simulated second is 50 ms.
const twin = await startTestTelnyxTwin(db, { timeScale: 0.05 });
const receiver = await startWebhookReceiver();

async function answeredCall(to: string) {
  const { data } = await twin.client.calls.dial({
    connection_id: TELNYX_TWIN_CONNECTION_ID,
    to,
    from: '+14155550000',
    webhook_url: receiver.url(),
    client_state: clientState(`attempt:${to}`),
  });
  const id = data!.call_control_id;
  await until(
    async () => receiver.of(id),
    (webhooks) => webhooks.some((webhook) => webhook.eventType === 'call.answered'),
    20_000,
  );
  return { id, legId: receiver.of(id)[0]!.payload.call_leg_id as string };
}

const savedOf = (legId: string) =>
  until(
    async () =>
      receiver.received.filter(
        (webhook) => webhook.eventType === 'call.recording.saved' && webhook.payload.call_leg_id === legId,
      ),
    (seen) => seen.length > 0,
    20_000,
  ).catch(() => {
    throw new Error('call.recording.saved never came');
  });

describe('recordings on the Telnyx twin', () => {
  it('records an answered call: the signed call.recording.saved at its end, listed by call, real audio, then deleted', async () => {
    const { id, legId } = await answeredCall('+14155550101');
    await twin.client.calls.actions.startRecording(id, {
      format: 'wav',
      channels: 'dual',
      command_id: 'recording',
      client_state: clientState('recording'),
    });
    // Sent again with its command_id: ignored, one recording.
    await twin.client.calls.actions.startRecording(id, { format: 'wav', channels: 'dual', command_id: 'recording' });
    await twin.client.calls.actions.speak(id, {
      payload: 'Hello, this call is being recorded. Which colour would you like?',
      voice: 'female',
      language: 'en-US',
    });
    await until(
      async () => receiver.of(id),
      (webhooks) => webhooks.some((webhook) => webhook.eventType === 'call.speak.ended'),
      20_000,
    );
    await twin.client.calls.actions.hangup(id, {});
    await untilHungUp(receiver, id);

    // Signed like every webhook, as described: no recording id, no call_control_id (the call is known by its leg).
    const [saved] = await savedOf(legId);
    expect(saved).toMatchObject({ verified: true, problems: [] });
    expect(saved!.payload).toMatchObject({
      call_leg_id: legId,
      channels: 'dual',
      client_state: clientState('recording'),
    });
    expect(saved!.payload.call_control_id).toBeUndefined();
    expect(saved!.payload.recording_urls.wav).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/recording-files\//);

    // Listed by the call (the SDK's filter), read by its id: one recording, complete, dual, its download URL.
    const listed = await twin.client.recordings.list({ filter: { call_control_id: id } });
    expect(listed.data).toHaveLength(1);
    const recording = listed.data[0]!;
    expect(recording).toMatchObject({
      call_control_id: id,
      call_leg_id: legId,
      channels: 'dual',
      status: 'completed',
      record_type: 'recording',
      source: 'call',
    });
    expect(recording.duration_millis).toBeGreaterThan(2_000);
    expect((await twin.client.recordings.list({ filter: { call_leg_id: legId } })).data.map((r) => r.id)).toEqual([
      recording.id,
    ]);
    const read = await twin.client.recordings.retrieve(recording.id!);
    expect(read.data).toMatchObject({ id: recording.id, call_control_id: id });

    // The audio: no key needed, the URL's signature is; a WAV sox decodes, two channels, the recording's length.
    const heard = await fetch(read.data!.download_urls!.wav!);
    expect(heard.status).toBe(200);
    expect(heard.headers.get('content-type')).toMatch(/^audio\/(x-)?wav/);
    const sox = soxInfo(Buffer.from(await heard.arrayBuffer()));
    expect(sox.channels).toBe(2);
    expect(sox.seconds).toBeGreaterThan(2);
    const forged = new URL(read.data!.download_urls!.wav!);
    forged.searchParams.set('expires', String(Number(forged.searchParams.get('expires')) + 60_000));
    expect((await fetch(forged)).status).toBe(403);

    // Another account's key finds nothing of it.
    const other = twin.clientWith(OTHER_ACCOUNT.apiKeys[0]!);
    await expect(other.recordings.retrieve(recording.id!)).rejects.toMatchObject({ status: 404 });
    expect((await other.recordings.list({ filter: { call_control_id: id } })).data).toEqual([]);

    // Deleted: gone from the list, its resource and its audio.
    const deleted = await twin.client.recordings.delete(recording.id!);
    expect(deleted.data).toMatchObject({ id: recording.id });
    await expect(twin.client.recordings.retrieve(recording.id!)).rejects.toBeInstanceOf(Telnyx.NotFoundError);
    expect((await twin.client.recordings.list({ filter: { call_control_id: id } })).data).toEqual([]);
    expect((await fetch(read.data!.download_urls!.wav!)).status).toBe(404);
    await expect(twin.client.recordings.delete(recording.id!)).rejects.toMatchObject({ status: 404 });

    expect(exchangeProblems(twin.exchanges)).toEqual([]);
  });

  it('refuses a record_start without its format or channels, and on a call not answered', async () => {
    const { id } = await answeredCall('+14155550102');
    await expect(
      twin.client.calls.actions.startRecording(id, { format: 'ogg' as never, channels: 'dual' }),
    ).rejects.toMatchObject({ status: 422 });
    await expect(twin.client.calls.actions.startRecording(id, { format: 'wav' } as never)).rejects.toMatchObject({
      status: 422,
    });
    await twin.client.calls.actions.hangup(id, {});
    await untilHungUp(receiver, id);
    await expect(
      twin.client.calls.actions.startRecording(id, { format: 'wav', channels: 'single' }),
    ).rejects.toMatchObject({ status: 422 });
    // A call never recorded saves nothing and lists nothing.
    expect((await twin.client.recordings.list({ filter: { call_control_id: id } })).data).toEqual([]);
  });
});
