// Telnyx's published OpenAPI description (vendor/openapi/telnyx/): TeXML calls and Call Control's dial and hang-up,
// with the Call Control webhooks of a call, and the checker the adapter and twin tests hold them to
// (docs/features/carriers/conformance.md).
import { describe, expect, it } from 'vitest';
import { carrierDescription, expectValidDescription, ownExampleProblems } from '../support/carrier-openapi';
import { TELNYX_CALL_CONTROL_ID, telnyxCallEvent, telnyxHangupEvent } from '../support/telnyx-events';
import { TELNYX_HANGUP_CAUSES } from '../../lib/carriers/telnyx/telnyx-states';

const telnyx = carrierDescription('telnyx');
const ACCOUNT = '61bf923e-5e4d-4595-a110-56190ea18a1b';
const CALL_CONTROL_ID = TELNYX_CALL_CONTROL_ID;
const TEXML_CALLS = { method: 'post', path: '/texml/Accounts/{account_sid}/Calls' };
const TEXML_LIST = { method: 'get', path: TEXML_CALLS.path };
const TEXML_CALL = { method: 'get', path: '/texml/Accounts/{account_sid}/Calls/{call_sid}' };
const TEXML_UPDATE = { method: 'post', path: TEXML_CALL.path };
const DIAL = { method: 'post', path: '/calls' };
const HANGUP = { method: 'post', path: '/calls/{call_control_id}/actions/hangup' };
const FORM = 'application/x-www-form-urlencoded';

/** A TeXML dial as an adapter would send it: JSON with Twilio's PascalCase names. */
const texmlDial = (): Record<string, unknown> => ({
  ApplicationSid: '1293384261075731499',
  To: '+15558675310',
  From: '+15017122661',
  Url: 'https://calls.example.com/carriers/telnyx/texml?attempt=att_1',
  StatusCallback: 'https://calls.example.com/carriers/telnyx/events?attempt=att_1',
  StatusCallbackEvent: 'initiated ringing answered completed',
  StatusCallbackMethod: 'POST',
  Timeout: 25,
  MachineDetection: 'DetectMessageEnd',
  AsyncAmd: true,
  AsyncAmdStatusCallback: 'https://calls.example.com/carriers/telnyx/amd?attempt=att_1',
});

/** A Call Control dial: the attempt in client_state, command_id against a duplicate dial. */
const dial = (): Record<string, unknown> => ({
  connection_id: '1684641123236054244',
  to: '+15558675310',
  from: '+15017122661',
  webhook_url: 'https://calls.example.com/carriers/telnyx/webhooks',
  client_state: Buffer.from('att_1').toString('base64'),
  command_id: 'att_1',
  answering_machine_detection: 'detect_beep',
  timeout_secs: 25,
});

const dialAnswer = () => ({
  data: {
    call_control_id: CALL_CONTROL_ID,
    call_leg_id: '428c31b6-7af4-4bcb-b7f5-5013ef9657c1',
    call_session_id: '428c31b6-abf3-3bc1-b7f4-5013ef9657c1',
    is_alive: false,
    record_type: 'call',
  },
});

const hangupEvent = () => telnyxHangupEvent();

const signedHeaders = { 'telnyx-timestamp': '1795766442', 'telnyx-signature-ed25519': 'c2lnbmF0dXJl' };

describe("Telnyx's vendored description", () => {
  it('is the published OpenAPI 3.1 description, valid, with its provenance, operations and webhooks', async () => {
    await expectValidDescription(
      telnyx,
      { openapi: '3.1.0', repository: 'team-telnyx/openapi', path: 'openapi/spec3.yml' },
      (broken) => {
        broken.webhooks.callHangup.post.responses = 'none';
      },
    );
    const document = telnyx.document as Record<string, any>;
    expect(document.servers).toEqual([
      { description: 'Version 2.0.0 of the Telnyx API', url: 'https://api.telnyx.com/v2' },
    ]);
    expect(document.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(document.components.securitySchemes)).toEqual(['bearerAuth']);
    const operations = Object.entries<Record<string, any>>(document.paths).flatMap(([template, item]) =>
      Object.keys(item)
        .filter((key) => ['get', 'post', 'patch'].includes(key))
        .map((method) => `${method.toUpperCase()} ${template} ${item[method].operationId}`),
    );
    expect(operations.sort()).toEqual([
      'GET /call_control_applications/{id} RetrieveCallControlApplication',
      'GET /calls/{call_control_id} RetrieveCallStatus',
      'GET /phone_numbers ListPhoneNumbers',
      // Recordings (docs/features/recordings.md): read, started on a call, deleted at retention.
      'GET /recordings GetRecordings',
      'GET /recordings/{recording_id} GetRecording',
      'GET /texml/Accounts/{account_sid}/Calls GetTexmlCalls',
      'GET /texml/Accounts/{account_sid}/Calls/{call_sid} GetTexmlCall',
      'PATCH /call_control_applications/{id} UpdateCallControlApplication',
      'PATCH /phone_numbers/{id} UpdatePhoneNumber',
      'POST /calls DialCall',
      'POST /calls/{call_control_id}/actions/answer AnswerCall',
      'POST /calls/{call_control_id}/actions/bridge BridgeCall',
      'POST /calls/{call_control_id}/actions/conversation_relay_start CallStartConversationRelay',
      'POST /calls/{call_control_id}/actions/gather_using_speak GatherUsingSpeak',
      'POST /calls/{call_control_id}/actions/hangup HangupCall',
      'POST /calls/{call_control_id}/actions/playback_start StartCallPlayback',
      'POST /calls/{call_control_id}/actions/record_start StartCallRecord',
      'POST /calls/{call_control_id}/actions/speak SpeakCall',
      'POST /calls/{call_control_id}/actions/transcription_start StartCallTranscription',
      'POST /calls/{call_control_id}/actions/transcription_stop StopCallTranscription',
      'POST /calls/{call_control_id}/actions/transfer TransferCall',
      'POST /texml/Accounts/{account_sid}/Calls InitiateTexmlCall',
      'POST /texml/Accounts/{account_sid}/Calls/{call_sid} UpdateTexmlCall',
    ]);
    // Call Control's webhooks are described; TeXML's status callbacks (form-encoded, Twilio-style) are not.
    expect(Object.keys(document.webhooks)).toEqual([
      'callAnswered',
      'callBridged',
      'callConversationEnded',
      'callGatherEnded',
      'callHangup',
      'callInitiated',
      'callMachineDetectionEnded',
      'callMachineGreetingEnded',
      'callMachinePremiumDetectionEnded',
      'callMachinePremiumGreetingEnded',
      'callPlaybackEnded',
      'callPlaybackStarted',
      'callRecordingSaved',
      'callSpeakEnded',
      'callSpeakStarted',
      'transcription',
    ]);
    // Every $ref of the subset leads somewhere in it.
    expect(telnyx.danglingRefs()).toEqual([]);
  });

  it('uses no format the checker does not know, and its own examples all pass the checker', () => {
    expect(telnyx.unknownFormats()).toEqual([]);
    expect(ownExampleProblems(telnyx)).toEqual({});
  });

  it('publishes the outcomes a call can have: statuses, AMD results and hang-up causes', () => {
    const schemas = (telnyx.document as Record<string, any>).components.schemas;
    expect(schemas.CallResource.properties.status.enum).toEqual([
      'ringing',
      'in-progress',
      'canceled',
      'completed',
      'failed',
      'busy',
      'no-answer',
    ]);
    expect(schemas.CallResource.properties.answered_by.enum).toEqual(['human', 'machine', 'not_sure']);
    expect(schemas.InitiateCallRequest.properties.MachineDetection.enum).toEqual([
      'Enable',
      'Disable',
      'DetectMessageEnd',
    ]);
    expect(schemas.CallRequest.properties.answering_machine_detection.enum).toEqual([
      'premium',
      'detect',
      'detect_beep',
      'detect_words',
      'greeting_end',
      'disabled',
    ]);
    expect(schemas.CallMachineDetectionEnded.properties.payload.properties.result.enum).toEqual([
      'human',
      'machine',
      'not_sure',
    ]);
    expect(schemas.CallMachineGreetingEnded.properties.payload.properties.result.enum).toEqual([
      'beep_detected',
      'ended',
      'not_sure',
    ]);
    // The adapter's list (lib/carriers/telnyx/telnyx-states.ts, each mapped to an outcome) is the description's.
    expect(schemas.CallHangup.properties.payload.properties.hangup_cause.enum).toEqual([...TELNYX_HANGUP_CAUSES]);
  });
});

describe('Telnyx TeXML: initiate a call (POST /texml/Accounts/{account_sid}/Calls, JSON)', () => {
  const url = `https://api.telnyx.com/v2/texml/Accounts/${ACCOUNT}/Calls`;

  it('takes a dial with the TeXML URL, status callbacks and asynchronous AMD, and its answer', () => {
    expect(telnyx.requestProblems(TEXML_CALLS, { url, body: JSON.stringify(texmlDial()) })).toEqual([]);
    expect(
      telnyx.responseProblems(TEXML_CALLS, {
        status: 200,
        body: { from: '+15017122661', status: 'queued', to: '+15558675310' },
      }),
    ).toEqual([]);
  });

  it('refuses a dial without To, with an unknown AMD mode, a text Timeout, or both Url and Texml', () => {
    const { To: _to, ...withoutTo } = texmlDial();
    expect(telnyx.requestProblems(TEXML_CALLS, { url, body: withoutTo })).toEqual([
      "body must have required property 'To'",
    ]);
    expect(telnyx.requestProblems(TEXML_CALLS, { url, body: { ...texmlDial(), MachineDetection: 'Enabled' } })).toEqual(
      ['body/MachineDetection must be equal to one of the allowed values: Enable, Disable, DetectMessageEnd'],
    );
    expect(telnyx.requestProblems(TEXML_CALLS, { url, body: { ...texmlDial(), Timeout: '25' } })).toEqual([
      'body/Timeout must be integer',
    ]);
    expect(telnyx.requestProblems(TEXML_CALLS, { url, body: { ...texmlDial(), Timeout: 3 } })).toEqual([
      'body/Timeout must be >= 5',
    ]);
    const both = telnyx.requestProblems(TEXML_CALLS, { url, body: { ...texmlDial(), Texml: '<Response/>' } });
    expect(both.at(-1)).toBe('body must match exactly one schema in oneOf');
  });

  it('refuses the dial form-encoded, as Twilio takes it: TeXML initiates with JSON', () => {
    const form = new URLSearchParams(
      Object.entries(texmlDial()).map(([name, value]): [string, string] => [name, String(value)]),
    );
    expect(telnyx.requestProblems(TEXML_CALLS, { url, contentType: FORM, body: form.toString() })).toEqual([
      `Content-Type ${FORM} is not one of application/json`,
    ]);
  });

  it('lists calls by To, From and StartTime_gt (not StartTime>), and fetches one', () => {
    const query = new URLSearchParams({ To: '+15558675310', From: '+15017122661', StartTime_gt: '2026-11-27' });
    expect(
      telnyx.requestProblems(TEXML_LIST, { url: `/v2/texml/Accounts/${ACCOUNT}/Calls?${query.toString()}` }),
    ).toEqual([]);
    query.append('StartTime>', '2026-11-27');
    query.set('Status', 'queued');
    expect(
      telnyx.requestProblems(TEXML_LIST, { url: `/v2/texml/Accounts/${ACCOUNT}/Calls?${query.toString()}` }),
    ).toEqual([
      'query.Status must be equal to one of the allowed values: canceled, completed, failed, busy, no-answer',
      'query parameter StartTime> is not declared by the operation',
    ]);
    const call = {
      account_sid: ACCOUNT,
      answered_by: 'machine',
      direction: 'outbound',
      from: '+15017122661',
      sid: CALL_CONTROL_ID,
      status: 'completed',
      to: '+15558675310',
      start_time: 'Thu, 27 Nov 2026 08:00:00 +0000',
      end_time: 'Thu, 27 Nov 2026 08:00:42 +0000',
      duration: '42',
    };
    expect(
      telnyx.requestProblems(TEXML_CALL, { url: `/v2/texml/Accounts/${ACCOUNT}/Calls/${CALL_CONTROL_ID}` }),
    ).toEqual([]);
    expect(telnyx.responseProblems(TEXML_CALL, { status: 200, body: call })).toEqual([]);
    expect(
      telnyx.responseProblems(TEXML_CALL, { status: 200, body: { ...call, answered_by: 'machine_end_beep' } }),
    ).toEqual(['body/answered_by must be equal to one of the allowed values: human, machine, not_sure']);
    expect(
      telnyx.responseProblems(TEXML_LIST, { status: 200, body: { calls: [call], page: 0, page_size: 20 } }),
    ).toEqual([]);
  });

  it('hangs up by updating the call, form-encoded this time', () => {
    const url = `/v2/texml/Accounts/${ACCOUNT}/Calls/${CALL_CONTROL_ID}`;
    expect(telnyx.requestProblems(TEXML_UPDATE, { url, contentType: FORM, body: 'Status=completed' })).toEqual([]);
    expect(
      telnyx.requestProblems(TEXML_UPDATE, { url, contentType: FORM, body: 'Status=completed&Method=PUT' }),
    ).toEqual(['body/Method must be equal to one of the allowed values: GET, POST']);
  });
});

describe('Telnyx Call Control: dial and hang up', () => {
  it('takes a dial with client_state and command_id, and its answer', () => {
    expect(telnyx.requestProblems(DIAL, { url: 'https://api.telnyx.com/v2/calls', body: dial() })).toEqual([]);
    expect(telnyx.responseProblems(DIAL, { status: 200, body: dialAnswer() })).toEqual([]);
  });

  it('refuses a dial without connection_id, with an unknown AMD mode or a text timeout, and a short answer', () => {
    const { connection_id: _connection, ...withoutConnection } = dial();
    expect(telnyx.requestProblems(DIAL, { url: '/v2/calls', body: withoutConnection })).toEqual([
      "body must have required property 'connection_id'",
    ]);
    expect(
      telnyx.requestProblems(DIAL, {
        url: '/v2/calls',
        body: { ...dial(), answering_machine_detection: 'premium_plus', timeout_secs: '25' },
      }),
    ).toEqual([
      'body/answering_machine_detection must be equal to one of the allowed values: premium, detect, detect_beep, detect_words, greeting_end, disabled',
      'body/timeout_secs must be integer',
    ]);
    const { call_leg_id: _leg, ...short } = dialAnswer().data;
    expect(telnyx.responseProblems(DIAL, { status: 200, body: { data: short } })).toEqual([
      "body/data must have required property 'call_leg_id'",
    ]);
    // Errors answer Telnyx's error body, under the status the description declares.
    expect(
      telnyx.responseProblems(DIAL, {
        status: 422,
        body: {
          errors: [{ code: '90018', title: 'Call has already ended', detail: 'This call is no longer active.' }],
        },
      }),
    ).toEqual([]);
    // The error body requires nothing, but its errors are a list.
    expect(telnyx.responseProblems(DIAL, { status: 422, body: { errors: 'Call has already ended' } })).toEqual([
      'body/errors must be array',
    ]);
  });

  it('hangs up a call by its call_control_id with a command_id', () => {
    const url = `/v2/calls/${encodeURIComponent(CALL_CONTROL_ID)}/actions/hangup`;
    expect(telnyx.requestProblems(HANGUP, { url, body: { command_id: 'att_1-hangup' } })).toEqual([]);
    expect(telnyx.responseProblems(HANGUP, { status: 200, body: { data: { result: 'ok' } } })).toEqual([]);
    expect(telnyx.requestProblems(HANGUP, { url, body: { command_id: 7 } })).toEqual([
      'body/command_id must be string',
    ]);
  });
});

describe('Telnyx Call Control webhooks', () => {
  it('takes a signed call.hangup delivery', () => {
    expect(
      telnyx.webhookProblems('callHangup', { headers: signedHeaders, body: JSON.stringify(hangupEvent()) }),
    ).toEqual([]);
  });

  it('refuses an unknown hang-up cause, a wrong event type, and a delivery without its signature headers', () => {
    const event = hangupEvent();
    event.data.payload.hangup_cause = 'busy';
    event.data.event_type = 'call.ended';
    expect(telnyx.webhookProblems('callHangup', { headers: signedHeaders, body: event })).toEqual([
      'body/data/event_type must be equal to one of the allowed values: call.hangup',
      'body/data/payload/hangup_cause must be equal to one of the allowed values: call_rejected, normal_clearing, originator_cancel, timeout, time_limit, user_busy, not_found, no_answer, unspecified',
    ]);
    expect(telnyx.webhookProblems('callHangup', { body: hangupEvent() })).toEqual([
      'header parameter telnyx-timestamp is required',
      'header parameter telnyx-signature-ed25519 is required',
    ]);
    expect(
      telnyx.webhookProblems('callHangup', {
        headers: { 'Telnyx-Timestamp': 'yesterday', 'Telnyx-Signature-Ed25519': 'c2lnbmF0dXJl' },
        body: hangupEvent(),
      }),
    ).toEqual(['header.telnyx-timestamp must be integer']);
  });

  it('takes the AMD result of a standard detection', () => {
    const detection = telnyxCallEvent('call.machine.detection.ended', { result: 'machine' }, '2026-11-27T08:00:05Z');
    expect(telnyx.webhookProblems('callMachineDetectionEnded', { headers: signedHeaders, body: detection })).toEqual(
      [],
    );
    detection.data.payload.result = 'machine_start';
    expect(telnyx.webhookProblems('callMachineDetectionEnded', { headers: signedHeaders, body: detection })).toEqual([
      'body/data/payload/result must be equal to one of the allowed values: human, machine, not_sure',
    ]);
  });
});
