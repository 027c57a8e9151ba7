// The Twilio twin's REST side through the official `twilio` SDK, and every answer checked against Twilio's vendored
// description (docs/features/carriers/twins.md#the-twilio-twin).
import twilio from 'twilio';
import { beforeAll, describe, expect, it } from 'vitest';
import { TWILIO_TWIN_ACCOUNT_SID, TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import { twilioClientAt } from '../../lib/carriers/twilio-base-url';
import { twilioSignature } from '../../simulators/twilio-twin/signature';
import { useTestDatabase } from '../support/database';
import { carrierDescription } from '../support/carrier-openapi';
import {
  conformingAnswer,
  ended,
  startProductStandIn,
  startTestTwilioTwin,
  twilioErrorProblems,
  twilioTwinRecord,
  twiml,
  TWIN_API_KEY,
} from '../support/twilio-twin';

const CALLS = { method: 'post', path: '/2010-04-01/Accounts/{AccountSid}/Calls.json' };
const LIST = { method: 'get', path: '/2010-04-01/Accounts/{AccountSid}/Calls.json' };
const CALL = { method: 'get', path: '/2010-04-01/Accounts/{AccountSid}/Calls/{Sid}.json' };
const UPDATE = { method: 'post', path: '/2010-04-01/Accounts/{AccountSid}/Calls/{Sid}.json' };
const calls = `/2010-04-01/Accounts/${TWILIO_TWIN_ACCOUNT_SID}/Calls`;
/** An account whose Voice Geographic Permissions enable +1 and +44 only. */
const GEO_ACCOUNT = { sid: `AC${'9e'.repeat(16)}`, authToken: 'geo-account-auth-token' };

describe("the twin's signature is Twilio's", () => {
  it("gives Twilio's published example signature", () => {
    const params = {
      CallSid: 'CA1234567890ABCDE',
      Caller: '+14158675309',
      Digits: '1234',
      From: '+14158675309',
      To: '+18005551212',
    };
    const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
    expect(twilioSignature('12345', url, params)).toBe('RSOYDt4T1cUTdK1PDd93/VVr8B8=');
    // And the SDK's validator agrees with what the twin signs, for another token and URL.
    const signed = twilioSignature(TWILIO_TWIN_AUTH_TOKEN, 'http://127.0.0.1:9/status?x=1', params);
    expect(twilio.validateRequest(TWILIO_TWIN_AUTH_TOKEN, signed, 'http://127.0.0.1:9/status?x=1', params)).toBe(true);
    expect(twilio.validateRequest(TWILIO_TWIN_AUTH_TOKEN, signed, 'http://127.0.0.1:9/status?x=2', params)).toBe(false);
  });
});

describe('the twin through the twilio SDK', () => {
  let twin: Awaited<ReturnType<typeof startTestTwilioTwin>>;
  let product: Awaited<ReturnType<typeof startProductStandIn>>;
  let db: Awaited<ReturnType<typeof useTestDatabase>>['db'];
  beforeAll(async () => {
    ({ db } = await useTestDatabase());
    twin = await startTestTwilioTwin(db, {
      accounts: [
        { sid: TWILIO_TWIN_ACCOUNT_SID, authToken: TWILIO_TWIN_AUTH_TOKEN, apiKeys: [TWIN_API_KEY] },
        { ...GEO_ACCOUNT, geoPermissions: ['+1', '+44'] },
      ],
    });
    product = await startProductStandIn();
    product.routes.set('/twiml', () => twiml('<Say>Hello.</Say><Pause length="30"/>'));
  });

  it('creates a call (201), fetches it and lists it, every answer as Twilio describes it', async () => {
    const body = new URLSearchParams([
      ['To', '+14155550100'],
      ['From', '+14155550000'],
      ['Url', `${product.baseUrl}/twiml`],
      ['StatusCallback', `${product.baseUrl}/status`],
      ['StatusCallbackEvent', 'initiated'],
      ['StatusCallbackEvent', 'answered'],
      ['Timeout', '20'],
      ['MachineDetection', 'DetectMessageEnd'],
      ['AsyncAmd', 'true'],
      ['AsyncAmdStatusCallback', `${product.baseUrl}/amd`],
    ]).toString();
    expect(
      carrierDescription('twilio').requestProblems(CALLS, {
        url: `${calls}.json`,
        contentType: 'application/x-www-form-urlencoded',
        body,
      }),
    ).toEqual([]);
    const created = await conformingAnswer(twin.baseUrl, CALLS, { path: `${calls}.json`, method: 'POST', body });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'queued',
      to: '+14155550100',
      from: '+14155550000',
      direction: 'outbound-api',
      to_formatted: '(415) 555-0100',
    });
    const sid = created.body.sid as string;
    expect(sid).toMatch(/^CA[0-9a-f]{32}$/);
    const fetched = await conformingAnswer(twin.baseUrl, CALL, { path: `${calls}/${sid}.json`, method: 'GET' });
    expect(fetched.body.sid).toBe(sid);
    const listed = await conformingAnswer(twin.baseUrl, LIST, {
      path: `${calls}.json?To=%2B14155550100`,
      method: 'GET',
    });
    expect((listed.body.calls as { sid: string }[]).map((call) => call.sid)).toEqual([sid]);
    const hungUp = await conformingAnswer(twin.baseUrl, UPDATE, {
      path: `${calls}/${sid}.json`,
      method: 'POST',
      body: 'Status=completed',
    });
    expect(['completed', 'canceled']).toContain(hungUp.body.status);
  });

  it('places a call through the SDK, which parses the call resource', async () => {
    const call = await twin.client.calls.create({
      to: '+14155550101',
      from: '+14155550000',
      url: `${product.baseUrl}/twiml`,
    });
    expect(call.sid).toMatch(/^CA/);
    expect(call.status).toBe('queued');
    expect(call.accountSid).toBe(TWILIO_TWIN_ACCOUNT_SID);
    expect(call.dateCreated).toBeInstanceOf(Date);
    const answered = await twin.client.calls(call.sid).fetch();
    expect(answered.to).toBe('+14155550101');
    await twin.client.calls(call.sid).update({ status: 'completed' });
  });

  it('takes an API key of the account, and refuses wrong credentials with 20003 (401)', async () => {
    const withKey = twilioClientAt(twin.baseUrl, {
      accountSid: TWILIO_TWIN_ACCOUNT_SID,
      apiKeySid: TWIN_API_KEY.sid,
      apiKeySecret: TWIN_API_KEY.secret,
    });
    const call = await withKey.calls.create({ to: '+14155550102', from: '+14155550000', twiml: twiml('<Hangup/>') });
    expect(call.sid).toMatch(/^CA/);
    const wrong = twilioClientAt(twin.baseUrl, { accountSid: TWILIO_TWIN_ACCOUNT_SID, authToken: 'not-the-token' });
    await expect(wrong.calls(call.sid).fetch()).rejects.toMatchObject({ status: 401, code: 20003 });
    const otherAccount = 'AC0000000000000000000000000000000f';
    const raw = await conformingAnswer(twin.baseUrl, CALL, {
      path: `/2010-04-01/Accounts/${otherAccount}/Calls/${call.sid}.json`,
      method: 'GET',
    });
    expect(raw).toEqual({
      status: 401,
      body: {
        code: 20003,
        message: 'Authenticate',
        more_info: 'https://www.twilio.com/docs/errors/20003',
        status: 401,
      },
    });
    expect(
      (await conformingAnswer(twin.baseUrl, CALL, { path: `${calls}/${call.sid}.json`, method: 'GET', auth: null }))
        .status,
    ).toBe(401);
  });

  it('answers 20404 (404) for an unknown call, and 400s with Twilio codes for a bad create', async () => {
    await expect(twin.client.calls('CA0123456789abcdef0123456789abcdef').fetch()).rejects.toMatchObject({
      status: 404,
      code: 20404,
    });
    await expect(
      twin.client.calls.create({ to: '12345', from: '+14155550000', url: `${product.baseUrl}/twiml` }),
    ).rejects.toMatchObject({ status: 400, code: 21211 });
    const cases: [string, number][] = [
      ['From=%2B14155550000&Url=http%3A%2F%2Fx.test%2F', 21201],
      ['To=%2B14155550100&Url=http%3A%2F%2Fx.test%2F', 21213],
      ['To=%2B14155550100&From=%2B14155550000', 21205],
      ['To=%2B14155550100&From=%2B14155550000&Url=not-a-url', 21205],
      ['To=%2B14155550100&From=%2B14155550000&Url=http%3A%2F%2Fx.test%2F&StatusCallbackEvent=hungup', 21626],
      ['To=%2B14155550100&From=bad&Url=http%3A%2F%2Fx.test%2F', 21212],
    ];
    for (const [body, code] of cases) {
      const answer = await conformingAnswer(twin.baseUrl, CALLS, { path: `${calls}.json`, method: 'POST', body });
      expect({ body, status: answer.status, code: answer.body.code }).toEqual({ body, status: 400, code });
    }
    expect(twilioErrorProblems({ code: '20003', message: 'x', status: 401 })).not.toEqual([]);
  });

  it("refuses a To outside the account's Geo Permissions with 21215, in Twilio's words, and places the others", async () => {
    const geoCalls = `/2010-04-01/Accounts/${GEO_ACCOUNT.sid}/Calls.json`;
    const create = (to: string) =>
      conformingAnswer(twin.baseUrl, CALLS, {
        path: geoCalls,
        method: 'POST',
        auth: `${GEO_ACCOUNT.sid}:${GEO_ACCOUNT.authToken}`,
        body: new URLSearchParams({ To: to, From: '+14155550000', Url: `${product.baseUrl}/twiml` }).toString(),
      });
    const refused = await create('+33142685300');
    expect(refused).toEqual({
      status: 400,
      body: {
        code: 21215,
        message:
          'Account not authorized to call +33142685300. Perhaps you need to enable some international permissions: https://www.twilio.com/console/voice/calls/geo-permissions/low-risk',
        more_info: 'https://www.twilio.com/docs/errors/21215',
        status: 400,
      },
    });
    expect(await twilioTwinRecord(db).count(`"accountSid" = $1 AND "to" = '+33142685300'`, GEO_ACCOUNT.sid)).toBe(0);
    for (const to of ['+14155550109', '+442071838759']) expect((await create(to)).status).toBe(201);
    // The development account has no Geo Permissions set: any destination.
    expect(
      (
        await conformingAnswer(twin.baseUrl, CALLS, {
          path: `${calls}.json`,
          method: 'POST',
          body: new URLSearchParams({
            To: '+33142685309',
            From: '+14155550000',
            Url: `${product.baseUrl}/twiml`,
          }).toString(),
        })
      ).status,
    ).toBe(201);
  });
});

describe("the twin's listing", () => {
  it('filters by To, From, Status and StartTime, and pages as Twilio does (PageSize, Page, PageToken)', async () => {
    const { db } = await useTestDatabase();
    const { client, baseUrl } = await startTestTwilioTwin(db);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      // Last digit 5: busy; ends on its own in simulated seconds.
      const call = await client.calls.create({
        to: '+14155550205',
        from: i < 3 ? '+14155550001' : '+14155550002',
        twiml: twiml('<Hangup/>'),
      });
      made.push(call.sid);
    }
    const other = await client.calls.create({ to: '+14155550210', from: '+14155550001', twiml: twiml('<Hangup/>') });
    for (const sid of [...made, other.sid]) await ended(client, sid);

    const newestFirst = [...made].reverse();
    expect((await client.calls.list({ to: '+14155550205' })).map((call) => call.sid)).toEqual(newestFirst);
    expect((await client.calls.list({ to: '+14155550205', from: '+14155550002' })).map((call) => call.sid)).toEqual(
      newestFirst.slice(0, 2),
    );
    expect((await client.calls.list({ status: 'busy' })).map((call) => call.sid)).toEqual(newestFirst);
    expect((await client.calls.list({ status: 'completed' })).map((call) => call.sid)).toEqual([other.sid]);
    const hourAgo = new Date(Date.now() - 3_600_000);
    expect(await client.calls.list({ to: '+14155550205', startTimeAfter: hourAgo })).toHaveLength(5);
    expect(await client.calls.list({ to: '+14155550205', startTimeBefore: hourAgo })).toHaveLength(0);
    expect(await client.calls.list({ to: '+14155550205', startTime: new Date() })).toHaveLength(5);

    // The SDK follows next_page_uri itself, page by page.
    expect((await client.calls.list({ to: '+14155550205', pageSize: 2 })).map((call) => call.sid)).toEqual(newestFirst);
    const first = await conformingAnswer(baseUrl, LIST, {
      path: `${calls}.json?To=%2B14155550205&PageSize=2`,
      method: 'GET',
    });
    expect(first.body).toMatchObject({ page: 0, page_size: 2, start: 0, end: 1, previous_page_uri: null });
    expect(first.body.next_page_uri).toBe(
      `${calls}.json?To=%2B14155550205&PageSize=2&Page=1&PageToken=PA${newestFirst[1]}`,
    );
    const second = await conformingAnswer(baseUrl, LIST, { path: first.body.next_page_uri as string, method: 'GET' });
    expect(second.body).toMatchObject({ page: 1, start: 2, end: 3 });
    expect((second.body.calls as { sid: string }[]).map((call) => call.sid)).toEqual(newestFirst.slice(2, 4));
    const back = await conformingAnswer(baseUrl, LIST, {
      path: second.body.previous_page_uri as string,
      method: 'GET',
    });
    expect((back.body.calls as { sid: string }[]).map((call) => call.sid)).toEqual(newestFirst.slice(0, 2));
    const third = await conformingAnswer(baseUrl, LIST, { path: second.body.next_page_uri as string, method: 'GET' });
    expect((third.body.calls as { sid: string }[]).map((call) => call.sid)).toEqual(newestFirst.slice(4));
    expect(third.body.next_page_uri).toBeNull();
  });
});
