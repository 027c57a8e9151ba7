// The Twilio twin's call recordings (docs/features/carriers/twins.md#recordings) through the official `twilio` SDK,
// every answer and the recording status callback checked against Twilio's vendored description: started on a call in
// progress, its signed callback at the call's end, its resource, its real audio (WAV and MP3), and its deletion.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import { carrierDescription } from '../support/carrier-openapi';
import { listenOnLoopback } from '../support/http-receiver';
import { useTestDatabase } from '../support/database';
import { soxInfo } from '../support/recordings';
import { conformingAnswer, ended, startProductStandIn, startTestTwilioTwin, twiml } from '../support/twilio-twin';
import { until } from '../support/until';

const CREATE = { method: 'post', path: '/2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}/Recordings.json' };
const FETCH = { method: 'get', path: '/2010-04-01/Accounts/{AccountSid}/Recordings/{Sid}.json' };
const account = `/2010-04-01/Accounts/${TWILIO_TWIN_ACCOUNT_SID}`;
const basic = `Basic ${Buffer.from(`${TWILIO_TWIN_ACCOUNT_SID}:${TWILIO_TWIN_AUTH_TOKEN}`).toString('base64')}`;

const { db } = await useTestDatabase();
// 1/20 of real time: the call's 4 s of talk last 0.2 s.
const twin = await startTestTwilioTwin(db, { timeScale: 0.05 });
const product = await startProductStandIn();

/** A TwiML route that starts the call's recording, as the product does, before it answers. */
const started = new Map<string, { sid: string; status: string; channels: number; problems: string[] }>();
const twimlServer = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const callSid = new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('CallSid')!;
    if (req.url === '/twiml/done') {
      res.writeHead(200, { 'content-type': 'text/xml' }).end(twiml('<Say>Goodbye.</Say><Hangup/>'));
      return;
    }
    // The create as the SDK sends it (the product's form, lib/carriers/twilio/twilio-recordings.ts), its answer kept raw.
    const form = new URLSearchParams([
      ['RecordingStatusCallback', `${product.baseUrl}/recording`],
      ['RecordingStatusCallbackEvent', 'completed'],
      ['RecordingStatusCallbackEvent', 'absent'],
      ['RecordingChannels', req.url === '/twiml/mono' ? 'mono' : 'dual'],
    ]);
    fetch(`${twin.baseUrl}${account}/Calls/${callSid}/Recordings.json`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    })
      .then(async (answer) => {
        const body = (await answer.json()) as { sid: string; status: string; channels: number };
        started.set(callSid, {
          ...body,
          problems: carrierDescription('twilio').responseProblems(CREATE, {
            status: answer.status,
            contentType: answer.headers.get('content-type') ?? undefined,
            body,
          }),
        });
        res
          .writeHead(200, { 'content-type': 'text/xml' })
          .end(
            twiml(
              '<Say>Hello, this call is being recorded.</Say><Gather input="speech" timeout="3" action="/twiml/done"><Say>Which colour would you like?</Say></Gather><Say>Goodbye.</Say>',
            ),
          );
      })
      .catch(() => res.writeHead(500).end());
  });
});
const twimlBase = `http://127.0.0.1:${await listenOnLoopback(twimlServer)}`;

describe('recordings on the Twilio twin', () => {
  it('records a call in progress: a described answer, the signed callback at its end, real audio, then deleted', async () => {
    const call = await twin.client.calls.create({
      to: '+14155550101',
      from: '+14155550100',
      url: `${twimlBase}/twiml/dual`,
    });
    await ended(twin.client, call.sid);
    const recording = started.get(call.sid)!;
    expect(recording).toMatchObject({ status: 'in-progress', channels: 2, problems: [] });

    // The callback: signed with the account's auth token, as Twilio's description of its parameters has them.
    const [callback] = await until(
      async () => product.at('/recording'),
      (seen) => seen.length > 0,
    );
    expect(callback!.valid).toBe(true);
    expect(callback!.params).toMatchObject({
      AccountSid: TWILIO_TWIN_ACCOUNT_SID,
      CallSid: call.sid,
      RecordingSid: recording.sid,
      RecordingStatus: 'completed',
      RecordingChannels: '2',
      RecordingSource: 'StartCallRecordingAPI',
      RecordingUrl: `${twin.baseUrl}${account}/Recordings/${recording.sid}`,
    });
    expect(Number(callback!.params.RecordingDuration)).toBeGreaterThanOrEqual(3);

    // The resource, as described.
    const fetched = await conformingAnswer(twin.baseUrl, FETCH, {
      method: 'GET',
      path: `${account}/Recordings/${recording.sid}.json`,
    });
    expect(fetched.body).toMatchObject({
      status: 'completed',
      channels: 2,
      call_sid: call.sid,
      source: 'StartCallRecordingAPI',
    });
    expect(fetched.body.duration).toBe(callback!.params.RecordingDuration);

    // The audio: WAV and MP3 sox decodes, of the recording's length; with the account's credentials only.
    const media = (extension: string, auth = basic) =>
      fetch(`${twin.baseUrl}${account}/Recordings/${recording.sid}${extension}`, { headers: { authorization: auth } });
    const wav = await media('.wav');
    expect(wav.status).toBe(200);
    expect(wav.headers.get('content-type')).toMatch(/^audio\/x-wav/);
    const heard = soxInfo(Buffer.from(await wav.arrayBuffer()), 'wav');
    expect(heard.channels).toBe(2);
    expect(heard.seconds).toBeGreaterThanOrEqual(Number(callback!.params.RecordingDuration) - 1);
    expect((await media('')).headers.get('content-type')).toMatch(/^audio\/x-wav/);
    const mp3 = await media('.mp3');
    expect(mp3.headers.get('content-type')).toMatch(/^audio\/mpeg/);
    expect(soxInfo(Buffer.from(await mp3.arrayBuffer()), 'mp3').seconds).toBeGreaterThan(2);
    expect(
      (await media('.wav', `Basic ${Buffer.from(`${TWILIO_TWIN_ACCOUNT_SID}:wrong`).toString('base64')}`)).status,
    ).toBe(401);

    // Deleted through the SDK: 204, then gone for every request.
    await twin.client.recordings(recording.sid).remove();
    expect((await media('.wav')).status).toBe(404);
    const gone = await conformingAnswer(twin.baseUrl, FETCH, {
      method: 'GET',
      path: `${account}/Recordings/${recording.sid}.json`,
    });
    expect(gone.status).toBe(404);
    await expect(twin.client.recordings(recording.sid).remove()).rejects.toMatchObject({ status: 404 });
  });

  it("answers a create as Twilio's description has it, and refuses a call not in progress (21220) or another account's", async () => {
    const call = await twin.client.calls.create({
      to: '+14155550111',
      from: '+14155550100',
      url: `${twimlBase}/twiml/mono`,
    });
    await ended(twin.client, call.sid);
    expect(started.get(call.sid)).toMatchObject({ channels: 1, problems: [] });
    // The create's request and answer against the description, on a call now ended: Twilio's 21220.
    // The form the product sends (lib/carriers/twilio/twilio-recordings.ts), as the SDK writes it.
    const body = new URLSearchParams([
      ['RecordingStatusCallback', `${product.baseUrl}/recording`],
      ['RecordingStatusCallbackMethod', 'POST'],
      ['RecordingStatusCallbackEvent', 'completed'],
      ['RecordingStatusCallbackEvent', 'absent'],
      ['RecordingChannels', 'dual'],
    ]);
    expect(
      carrierDescription('twilio').requestProblems(CREATE, {
        url: `${account}/Calls/${call.sid}/Recordings.json`,
        contentType: 'application/x-www-form-urlencoded',
        body: body.toString(),
      }),
    ).toEqual([]);
    const refused = await conformingAnswer(twin.baseUrl, CREATE, {
      method: 'POST',
      path: `${account}/Calls/${call.sid}/Recordings.json`,
      body: body.toString(),
    });
    expect(refused).toMatchObject({ status: 400, body: { code: 21220 } });
    const unknown = await conformingAnswer(twin.baseUrl, CREATE, {
      method: 'POST',
      path: `${account}/Calls/CA${'0'.repeat(32)}/Recordings.json`,
      body: body.toString(),
    });
    expect(unknown).toMatchObject({ status: 404, body: { code: 20404 } });
  });
});
