// Twilio's published OpenAPI description (vendor/openapi/twilio/), and the checker the adapter and twin tests hold
// their requests and answers to (docs/features/carriers/conformance.md).
import { describe, expect, it } from 'vitest';
import {
  CarrierDescription,
  carrierDescription,
  expectValidDescription,
  ownExampleProblems,
} from '../support/carrier-openapi';

const twilio = carrierDescription('twilio');
const ACCOUNT = `AC${'0123456789abcdef'.repeat(2)}`;
const CALL = `CA${'fedcba9876543210'.repeat(2)}`;
const CALLS = { method: 'post', path: '/2010-04-01/Accounts/{AccountSid}/Calls.json' };
const LIST = { method: 'get', path: CALLS.path };
const CALL_FETCH = { method: 'get', path: '/2010-04-01/Accounts/{AccountSid}/Calls/{Sid}.json' };
const CALL_UPDATE = { method: 'post', path: CALL_FETCH.path };
const FORM = 'application/x-www-form-urlencoded';

/** A dial as the Twilio adapter sends it: the attempt in the TwiML and callback URLs, asynchronous AMD. */
const dial = () =>
  new URLSearchParams([
    ['To', '+15558675310'],
    ['From', '+15017122661'],
    ['Url', 'https://calls.example.com/carriers/twilio/twiml?attempt=att_1'],
    ['StatusCallback', 'https://calls.example.com/carriers/twilio/events?attempt=att_1'],
    ['StatusCallbackEvent', 'initiated'],
    ['StatusCallbackEvent', 'ringing'],
    ['StatusCallbackEvent', 'answered'],
    ['StatusCallbackEvent', 'completed'],
    ['StatusCallbackMethod', 'POST'],
    ['Timeout', '25'],
    ['MachineDetection', 'DetectMessageEnd'],
    ['AsyncAmd', 'true'],
    ['AsyncAmdStatusCallback', 'https://calls.example.com/carriers/twilio/amd?attempt=att_1'],
  ]);

const createRequest = (form: URLSearchParams, account = ACCOUNT) => ({
  url: `/2010-04-01/Accounts/${account}/Calls.json`,
  contentType: `${FORM}; charset=utf-8`,
  body: form.toString(),
});

/** A Call resource as Twilio answers a create: queued, nothing known yet. */
const callResource = () => ({
  account_sid: ACCOUNT,
  annotation: null,
  answered_by: null,
  api_version: '2010-04-01',
  caller_name: null,
  date_created: 'Tue, 31 Aug 2010 20:36:28 +0000',
  date_updated: 'Tue, 31 Aug 2010 20:36:28 +0000',
  direction: 'outbound-api',
  duration: null,
  end_time: null,
  forwarded_from: null,
  from: '+15017122661',
  from_formatted: '(501) 712-2661',
  group_sid: null,
  parent_call_sid: null,
  phone_number_sid: `PN${'0'.repeat(32)}`,
  price: null,
  price_unit: 'USD',
  sid: CALL,
  start_time: null,
  status: 'queued',
  subresource_uris: { recordings: `/2010-04-01/Accounts/${ACCOUNT}/Calls/${CALL}/Recordings.json` },
  to: '+15558675310',
  to_formatted: '(555) 867-5310',
  trunk_sid: null,
  uri: `/2010-04-01/Accounts/${ACCOUNT}/Calls/${CALL}.json`,
  queue_time: '0',
});

describe("Twilio's vendored description", () => {
  it('is the published OpenAPI 3.0 description, valid, with its provenance and the calls operations', async () => {
    // The validator refuses a broken one: it can fail.
    await expectValidDescription(
      twilio,
      { openapi: '3.0.1', repository: 'twilio/twilio-oai', path: 'spec/json/twilio_api_v2010.json' },
      (broken) => {
        broken.paths[CALLS.path].post.responses = 'none';
      },
    );
    const document = twilio.document as Record<string, any>;
    expect(document.servers).toEqual([{ url: 'https://api.twilio.com' }]);
    expect(document.components.securitySchemes).toEqual({ accountSid_authToken: { scheme: 'basic', type: 'http' } });
    expect(Object.keys(document.paths)).toEqual([
      CALLS.path,
      CALL_FETCH.path,
      // Recordings (docs/features/recordings.md#twilio): started on a call, read, deleted at retention.
      '/2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}/Recordings.json',
      // A number pointed at the product (docs/features/carriers/inbound.md#pointing-the-number).
      '/2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers/{Sid}.json',
      '/2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers.json',
      '/2010-04-01/Accounts/{AccountSid}/Recordings/{Sid}.json',
    ]);
    expect(Object.keys(document.paths[CALLS.path]).filter((key) => key === 'get' || key === 'post')).toEqual([
      'post',
      'get',
    ]);
    // Every $ref of the subset leads somewhere in it.
    expect(twilio.danglingRefs()).toEqual([]);
    const { schemas: _schemas, ...withoutSchemas } = document.components;
    expect(new CarrierDescription('twilio', { ...document, components: withoutSchemas }).danglingRefs()).toEqual([
      '#/components/schemas/api.v2010.account.call',
      '#/components/schemas/call_enum_status',
      '#/components/schemas/call_enum_update_status',
      '#/components/schemas/api.v2010.account.call.call_recording',
      '#/components/schemas/api.v2010.account.incoming_phone_number',
      '#/components/schemas/incoming_phone_number_enum_emergency_status',
      '#/components/schemas/incoming_phone_number_enum_voice_receive_mode',
      '#/components/schemas/api.v2010.account.recording',
    ]);
  });

  it('uses no format the checker does not know', () => {
    expect(twilio.unknownFormats()).toEqual([]);
  });

  it("passes its own examples through the checker, but for Twilio's known quirks", () => {
    // Twilio's examples send fields the description does not declare (IfMachine and the AMD tuning fields are
    // older or unpublished parameters), and one sends an empty Method and Url. Its listing examples answer
    // relative page URIs, read as such (RESPONSE_FORMATS in test/support/carrier-openapi.ts).
    expect(ownExampleProblems(twilio)).toEqual({
      [`POST ${CALLS.path} request create`]: [
        'body/IfMachine is not declared',
        'body/MachineDetectionEngine is not declared',
        'body/MachineDetectionMinWordLength is not declared',
        'body/MachineDetectionMaxWordLength is not declared',
        'body/MachineDetectionWordsSilence is not declared',
        'body/MachineDetectionMaxNumOfWords is not declared',
        'body/MachineDetectionSilenceThreshold is not declared',
        'body/Transcribe is not declared',
        'body/TranscriptionConfiguration is not declared',
      ],
      [`POST ${CALLS.path} request createWithTwiml`]: [
        'body/Method must be equal to one of the allowed values: GET, POST',
        'body/Method must match format "http-method"',
        'body/Url must match format "uri"',
        'body/IfMachine is not declared',
        'body/Transcribe is not declared',
        'body/TranscriptionConfiguration is not declared',
      ],
      [`POST ${CALL_UPDATE.path} request update`]: ['body/StatusCallbackUrl is not declared'],
      // Its recording create examples send PlayBeep and transcription fields the description does not declare.
      ...Object.fromEntries(
        ['create200', 'create201'].map((example) => [
          `POST /2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}/Recordings.json request ${example}`,
          [
            'body/PlayBeep is not declared',
            'body/Transcribe is not declared',
            'body/TranscriptionConfiguration is not declared',
          ],
        ]),
      ),
      // Its IncomingPhoneNumber examples answer "" for an application SID not set, where Twilio answers null.
      ...Object.fromEntries(
        [
          ['GET /2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers.json 200 readFull', 'incoming_phone_numbers/0/'],
          ['GET /2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers/{Sid}.json 200 fetch', ''],
          ['POST /2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers/{Sid}.json 200 update', ''],
        ].map(([example, at]) => [
          example,
          ['sms_application_sid', 'voice_application_sid'].flatMap((field) => [
            `body/${at}${field} must NOT have fewer than 34 characters`,
            `body/${at}${field} must match pattern "^AP[0-9a-fA-F]{32}$"`,
          ]),
        ]),
      ),
    });
  });

  it('publishes the enums of a call: CallStatus and the statuses an update may set', () => {
    const schemas = (twilio.document as Record<string, any>).components.schemas;
    expect(schemas.call_enum_status.enum).toEqual([
      'queued',
      'ringing',
      'in-progress',
      'completed',
      'busy',
      'failed',
      'no-answer',
      'canceled',
    ]);
    expect(schemas.call_enum_update_status.enum).toEqual(['canceled', 'completed']);
    // AnsweredBy, MachineDetection and AsyncAmd are plain strings in the description: their values are in prose only.
    const call = schemas['api.v2010.account.call'].properties;
    expect(call.answered_by).not.toHaveProperty('enum');
    const create = (twilio.document as Record<string, any>).paths[CALLS.path].post.requestBody.content[FORM].schema;
    expect(create.required).toEqual(['To', 'From']);
    expect(create.properties.MachineDetection).not.toHaveProperty('enum');
    expect(create.properties.StatusCallbackEvent).toEqual(expect.objectContaining({ type: 'array' }));
  });
});

describe('Twilio: create a call (POST .../Calls.json, form-encoded)', () => {
  it("takes the adapter's dial", () => {
    expect(twilio.requestProblems(CALLS, createRequest(dial()))).toEqual([]);
    // One status event is still an array of one.
    const one = dial();
    one.delete('StatusCallbackEvent');
    one.append('StatusCallbackEvent', 'completed');
    expect(twilio.requestProblems(CALLS, createRequest(one))).toEqual([]);
  });

  it('refuses a dial without To', () => {
    const form = dial();
    form.delete('To');
    expect(twilio.requestProblems(CALLS, createRequest(form))).toEqual(["body must have required property 'To'"]);
  });

  it('refuses a value outside an enum', () => {
    const form = dial();
    form.set('StatusCallbackMethod', 'PUT');
    expect(twilio.requestProblems(CALLS, createRequest(form))).toEqual([
      'body/StatusCallbackMethod must be equal to one of the allowed values: GET, POST',
    ]);
  });

  it('refuses a value of the wrong type', () => {
    const form = dial();
    form.set('Timeout', 'soon');
    form.set('AsyncAmdStatusCallback', 'not a url');
    expect(twilio.requestProblems(CALLS, createRequest(form))).toEqual([
      'body/Timeout must be integer',
      'body/AsyncAmdStatusCallback must match format "uri"',
    ]);
  });

  it('refuses a misspelt field, which Twilio would ignore', () => {
    const form = dial();
    form.append('StatusCallbackEvents', 'answered');
    expect(twilio.requestProblems(CALLS, createRequest(form))).toEqual(['body/StatusCallbackEvents is not declared']);
  });

  it('refuses a bad account SID in the path, a JSON body and a missing body', () => {
    expect(twilio.requestProblems(CALLS, createRequest(dial(), 'AC123'))).toEqual([
      'path.AccountSid must NOT have fewer than 34 characters',
      'path.AccountSid must match pattern "^AC[0-9a-fA-F]{32}$"',
    ]);
    expect(
      twilio.requestProblems(CALLS, {
        url: `/2010-04-01/Accounts/${ACCOUNT}/Calls.json`,
        body: Object.fromEntries(dial()),
      }),
    ).toEqual([`Content-Type application/json is not one of ${FORM}`]);
    // The description does not mark the body required; an empty form still lacks To and From.
    expect(
      twilio.requestProblems(CALLS, { url: `/2010-04-01/Accounts/${ACCOUNT}/Calls.json`, contentType: FORM, body: '' }),
    ).toEqual(["body must have required property 'To'", "body must have required property 'From'"]);
    expect(twilio.requestProblems(CALLS, { url: `/2010-04-01/Accounts/${ACCOUNT}/Calls`, body: '' })).toEqual([
      `/2010-04-01/Accounts/${ACCOUNT}/Calls is not a path of ${CALLS.path}`,
    ]);
  });

  it('takes a queued Call resource as the 201 answer, and refuses a wrong one', () => {
    expect(twilio.responseProblems(CALLS, { status: 201, body: JSON.stringify(callResource()) })).toEqual([]);
    expect(
      twilio.responseProblems(CALLS, {
        status: 201,
        body: { ...callResource(), status: 'answered', duration: 15, date_created: '2010-08-31T20:36:28Z' },
      }),
    ).toEqual([
      'body/date_created must match format "date-time-rfc-2822"',
      'body/status must be equal to one of the allowed values: queued, ringing, in-progress, completed, busy, failed, no-answer, canceled',
      'body/duration must be string',
    ]);
    expect(twilio.responseProblems(CALLS, { status: 200, body: callResource() })).toEqual([
      'status 200 is not declared (declared: 201)',
    ]);
    expect(twilio.responseProblems(CALLS, { status: 201, contentType: 'text/xml', body: '<x/>' })).toEqual([
      'Content-Type text/xml is not one of application/json',
    ]);
  });
});

describe('Twilio: list, fetch and update a call', () => {
  it('takes a listing by To, From and start time (as twilio-node writes dates), and refuses bad parameters', () => {
    const query = new URLSearchParams([
      ['To', '+15558675310'],
      ['From', '+15017122661'],
      ['StartTime>', '2026-11-27T08:00:00Z'],
      ['PageSize', '20'],
    ]);
    expect(
      twilio.requestProblems(LIST, {
        url: `https://api.twilio.com/2010-04-01/Accounts/${ACCOUNT}/Calls.json?${query.toString()}`,
      }),
    ).toEqual([]);
    query.set('PageSize', '0');
    query.set('StartTime>', '27/11/2026');
    query.set('Status', 'answered');
    query.set('Direction', 'outbound-api');
    expect(
      twilio.requestProblems(LIST, { url: `/2010-04-01/Accounts/${ACCOUNT}/Calls.json?${query.toString()}` }),
    ).toEqual([
      'query.Status must be equal to one of the allowed values: queued, ringing, in-progress, completed, busy, failed, no-answer, canceled',
      'query.StartTime> must match format "date-time"',
      'query.PageSize must be >= 1',
      'query parameter Direction is not declared by the operation',
    ]);
  });

  it('takes a page of calls, and refuses one whose call has a bad SID', () => {
    const page = {
      calls: [{ ...callResource(), status: 'completed', answered_by: 'machine_end_beep', duration: '42' }],
      end: 0,
      first_page_uri: `/2010-04-01/Accounts/${ACCOUNT}/Calls.json?PageSize=20&Page=0`,
      next_page_uri: null,
      page: 0,
      page_size: 20,
      previous_page_uri: null,
      start: 0,
      uri: `/2010-04-01/Accounts/${ACCOUNT}/Calls.json?PageSize=20&Page=0`,
    };
    expect(twilio.responseProblems(LIST, { status: 200, body: page })).toEqual([]);
    page.calls[0]!.sid = 'SM123';
    expect(twilio.responseProblems(LIST, { status: 200, body: page })).toEqual([
      'body/calls/0/sid must NOT have fewer than 34 characters',
      'body/calls/0/sid must match pattern "^CA[0-9a-fA-F]{32}$"',
    ]);
  });

  it('fetches a call by its SID', () => {
    expect(twilio.requestProblems(CALL_FETCH, { url: `/2010-04-01/Accounts/${ACCOUNT}/Calls/${CALL}.json` })).toEqual(
      [],
    );
    expect(twilio.responseProblems(CALL_FETCH, { status: 200, body: callResource() })).toEqual([]);
    expect(
      twilio.requestProblems(CALL_FETCH, { url: `/2010-04-01/Accounts/${ACCOUNT}/Calls/${ACCOUNT}.json` }),
    ).toEqual(['path.Sid must match pattern "^CA[0-9a-fA-F]{32}$"']);
  });

  it('hangs up by setting Status=completed (or canceled), nothing else', () => {
    const url = `/2010-04-01/Accounts/${ACCOUNT}/Calls/${CALL}.json`;
    for (const status of ['completed', 'canceled'])
      expect(twilio.requestProblems(CALL_UPDATE, { url, contentType: FORM, body: `Status=${status}` })).toEqual([]);
    expect(twilio.requestProblems(CALL_UPDATE, { url, contentType: FORM, body: 'Status=hangup' })).toEqual([
      'body/Status must be equal to one of the allowed values: canceled, completed',
    ]);
  });
});
