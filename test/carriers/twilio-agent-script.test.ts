// The agent's script walk on Twilio calls and the voicemail drop (docs/features/carriers/twilio.md#the-script-walk), end to
// end on the real servers: the API, a worker, Temporal and PostgreSQL, and the Twilio twin as the carrier. The twin's
// personas say what the lead answers; its call log is what each side really said.
import http from 'node:http';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { TWILIO_TWIN_AUTH_TOKEN } from '../../lib/carriers/twin';
import { NO_ANSWER_TEXT } from '../../lib/carriers/twilio/twiml';
import { twilioCallbackUrl } from '../../lib/carriers/twilio/twilio-urls';
import type { Transcript } from '../../lib/calls/transcript';
import { speakingMs } from '../../simulators/twilio-twin/plan';
import { checkedFetch } from '../support/api';
import {
  answeredTwilioCall,
  calledLead,
  type CarrierPath,
  expectAnsweredWalk,
  insertShoeShopAgent,
  said,
  startCarrierPath,
  startedAgentCampaign,
  withIntelligence as withIntelligenceOf,
} from '../support/carrier-calls';
import { useTestDatabase } from '../support/database';
import { listenOnLoopback } from '../support/http-receiver';
import { uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { scriptPersona, twilioTwinRecord, twinLog } from '../support/twilio-twin';
import { connectTwinCaller, startTwilioTwinStack } from '../support/twilio-twin-stack';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
// The script walk's speech Gathers (CONVERSATION_ENGINE=gather), the fallback these tests are about.
const { keyring, twin, simulated, api } = await startTwilioTwinStack(
  { db, url, temporal },
  { conversationEngine: 'gather' },
);
const main: CarrierPath = { api, temporal };

const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view', 'agents.edit'] });
const caller = '+14155569001';
const connection = await connectTwinCaller(db, keyring, twin.baseUrl, owner.workspaceId, caller);
const dictionary = await db.dictionary.create({
  data: { workspaceId: owner.workspaceId, name: 'Colours', terms: ['navy', 'crimson'], charCount: 11 },
});
// A pronunciation (docs/features/dictionaries.md#pronunciations): said through SSML inside <Say>, Polly voices.
const pronounced = await db.dictionary.create({
  data: { workspaceId: owner.workspaceId, name: 'Said', terms: ['shoe shop => shoo shop'], charCount: 22 },
});

const QUESTIONS = ['What colour would you like for the shoes?', 'How many pairs would you like?'];

/**
 * A script a machine outlasts nothing of: detection is asynchronous, so the walk starts at the answer and the machine's
 * beep redirects it. At the twin's time scale the product must answer the detection result before the script runs
 * out, on a loaded machine too: 20 unanswered Gathers are 2 minutes of the call, 2.4 s of the test.
 */
const MACHINE_SCRIPT = Array.from({ length: 20 }, (_, index) => `Are you still there, ${index + 1}?`);

async function campaignWithAgent(
  voicemailMessage: string | null = null,
  {
    questions = QUESTIONS,
    via = api,
    dictionaryId = dictionary.id,
  }: { questions?: string[]; via?: typeof api; dictionaryId?: string } = {},
) {
  const agent = await insertShoeShopAgent(db, owner.workspaceId, {
    questions,
    voicemailMessage,
    dictionaries: { create: [{ dictionaryId, position: 0 }] },
  });
  return startedAgentCampaign(db, via, owner, { name: 'Script walk', caller, agentId: agent.id });
}

/** Pushes a lead, waits for its ladder to finish, and answers its one call. */
const callLead = (campaignId: string, phone: string, via: CarrierPath = main) =>
  calledLead(db, via, owner, campaignId, phone);

const withIntelligence = (callId: string) => withIntelligenceOf(db, callId);

/** Posts a form to a call's TwiML route as Twilio would, signed with `token` (null: unsigned). */
async function postTwiml(path: string, form: Record<string, string>, token: string | null, baseUrl = api.baseUrl) {
  const target = `${baseUrl}${path}`;
  return checkedFetch(target, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(token !== null && { 'x-twilio-signature': twilio.getExpectedTwilioSignature(token, target, form) }),
    },
    body: new URLSearchParams(form).toString(),
  });
}

describe("the agent's script walk on a Twilio call", () => {
  it('asks each question with a speech Gather, and the transcript is what the lead really answered; call intelligence fills the fields from it', async () => {
    const campaign = await campaignWithAgent();
    await scriptPersona(twin.baseUrl, {
      number: '+14155569101',
      answers: [
        { speech: "I'd like navy, please.", confidence: 0.93 },
        { speech: '3 pairs.', confidence: 0.88 },
      ],
    });
    const { result, call } = await callLead(campaign.id, '+14155569101');
    expect(result).toMatchObject({ outcome: 'answered' });
    const done = await withIntelligence(call.id);
    const transcript = done.transcript as Transcript;
    expectAnsweredWalk(transcript, {
      agent: ['Hello Ana, this is the shoe shop.', ...QUESTIONS, 'Thank you, goodbye.'],
      lead: [
        { text: "I'd like navy, please.", confidence: 0.93 },
        { text: '3 pairs.', confidence: 0.88 },
      ],
    });
    // What the twin heard and said is the transcript: the callee's speech, the agent's Says (voice mapped).
    const log = await twinLog(twin.baseUrl, call.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === 'speech').map((entry) => entry.text)).toEqual(
      said(transcript, 'lead'),
    );
    const says = log.log.filter((entry) => entry.kind === 'say');
    expect(says.map((entry) => entry.text)).toEqual(said(transcript, 'agent'));
    expect(new Set(says.map((entry) => `${entry.voice}/${entry.language}`))).toEqual(new Set(['Polly.Joanna/en-US']));
    const intelligence = done.intelligence as { extraction: Record<string, { value: unknown }> };
    expect(intelligence.extraction.colour!.value).toBe('navy');
    expect(intelligence.extraction.pairs!.value).toBe(3);
    expect(done.outcome).toBe('answered');
  });

  it('says (no answer) for a question the lead does not answer, and goes on; a pronunciation is said, not written', async () => {
    const campaign = await campaignWithAgent(null, { dictionaryId: pronounced.id });
    await scriptPersona(twin.baseUrl, { number: '+14155569102', answers: [null, '2 pairs, please.'] });
    const { call } = await callLead(campaign.id, '+14155569102');
    const done = await withIntelligence(call.id);
    const transcript = done.transcript as Transcript;
    expect(said(transcript, 'lead')).toEqual([NO_ANSWER_TEXT, '2 pairs, please.']);
    expect(said(transcript, 'agent')).toEqual([
      'Hello Ana, this is the shoe shop.',
      ...QUESTIONS,
      'Thank you, goodbye.',
    ]);
    // The twin read the <Say>'s SSML <sub> as its alias (its words joined by spaces); it listened for the written form.
    const log = await twinLog(twin.baseUrl, call.providerCallId!);
    expect(log.log.find((entry) => entry.kind === 'say')!.text).toBe('Hello Ana, this is the shoo shop .');
    const intelligence = done.intelligence as { extraction: Record<string, { value: unknown }> };
    expect(intelligence.extraction.colour!.value).toBeNull();
    expect(intelligence.extraction.pairs!.value).toBe(2);
  });

  it('refuses unsigned and badly signed step requests (401), and a replayed step changes no turn', async () => {
    const campaign = await campaignWithAgent();
    await scriptPersona(twin.baseUrl, { number: '+14155569103', answers: ['Red.', 'One pair.'] });
    const { call } = await callLead(campaign.id, '+14155569103');
    await withIntelligence(call.id);
    const turnsBefore = await db.callTurn.findMany({
      where: { callId: call.id },
      orderBy: [{ step: 'asc' }, { part: 'asc' }],
    });
    expect(turnsBefore.filter((turn) => turn.speaker === 'lead').map((turn) => turn.text)).toEqual([
      'Red.',
      'One pair.',
    ]);
    const step = (n: number | string) =>
      `${new URL(twilioCallbackUrl(api.baseUrl, 'twiml', { connectionId: connection.id, attemptId: call.attemptId })).pathname}/${n}`;
    const form = { CallSid: call.providerCallId!, SpeechResult: 'Green.', Confidence: '0.99' };
    expect((await postTwiml(step(1), form, null)).status).toBe(401);
    expect((await postTwiml(step(1), form, 'not-the-auth-token')).status).toBe(401);
    // A step out of the script is unknown.
    expect((await postTwiml(step(3), form, TWILIO_TWIN_AUTH_TOKEN)).status).toBe(404);
    // Replayed (signed, as a captured request would be): answered again, nothing stored twice or changed.
    const replay = await postTwiml(step(1), form, TWILIO_TWIN_AUTH_TOKEN);
    expect(replay.status).toBe(200);
    expect(await replay.text()).toContain(QUESTIONS[1]);
    const second = await postTwiml(step(2), { CallSid: call.providerCallId! }, TWILIO_TWIN_AUTH_TOKEN);
    expect(second.status).toBe(200);
    expect(
      await db.callTurn.findMany({ where: { callId: call.id }, orderBy: [{ step: 'asc' }, { part: 'asc' }] }),
    ).toEqual(turnsBefore);
  });
});

describe('the voicemail drop', () => {
  it("leaves the agent's message after a machine's beep, then hangs up: voicemail_left", async () => {
    const campaign = await campaignWithAgent('Hi {{name}}, this is the shoe shop: please call us back.', {
      questions: MACHINE_SCRIPT,
    });
    const { result, call } = await callLead(campaign.id, '+14155569107');
    expect(result).toMatchObject({ outcome: 'voicemail_left' });
    const ended = await db.call.findUniqueOrThrow({ where: { id: call.id } });
    expect(ended).toMatchObject({ outcome: 'voicemail_left', answeredBy: 'machine' });
    expect(ended.voicemailLeftAt).not.toBeNull();
    const log = await twinLog(twin.baseUrl, call.providerCallId!);
    const greeting = log.log.find((entry) => entry.kind === 'greeting')!;
    const message = log.log.filter(
      (entry) => entry.kind === 'say' && entry.text === 'Hi Ana, this is the shoe shop: please call us back.',
    );
    expect(message).toHaveLength(1);
    expect(message[0]!.atMs).toBeGreaterThanOrEqual(greeting.atMs + speakingMs(greeting.text!));
    expect(log.log.at(-1)).toMatchObject({ kind: 'hangup', speaker: 'agent' });
    const done = await withIntelligence(call.id);
    expect(said(done.transcript as Transcript, 'agent').at(-1)).toBe(
      'Hi Ana, this is the shoe shop: please call us back.',
    );
  });

  it('without a message, hangs up at the beep: plain voicemail', async () => {
    const campaign = await campaignWithAgent(null, { questions: MACHINE_SCRIPT });
    const { result, call } = await callLead(campaign.id, '+14155569117');
    expect(result).toMatchObject({ outcome: 'voicemail' });
    const ended = await db.call.findUniqueOrThrow({ where: { id: call.id } });
    expect(ended).toMatchObject({ outcome: 'voicemail', voicemailLeftAt: null });
    const log = await twinLog(twin.baseUrl, call.providerCallId!);
    // Redirected at the beep to the voicemail step, which hangs up: the script's closing is never said to the machine.
    const redirect = log.log.findIndex((entry) => entry.kind === 'redirect');
    expect((log.log[redirect] as { url?: string } | undefined)?.url).toMatch(/\/twiml\/voicemail$/);
    expect(log.log.slice(redirect + 1).map((entry) => entry.kind)).toEqual(['hangup']);
    expect(log.log.some((entry) => entry.text === 'Thank you, goodbye.')).toBe(false);
  });

  it("takes the agent's voicemailMessage over the API: stored trimmed, null clears it, too long is refused", async () => {
    const created = await api.request('POST', '/agents', {
      key: owner.key,
      body: {
        name: 'Voicemail',
        language: 'en-US',
        voiceId: 'espeak-ng/en-us',
        script: { openingLine: 'Hi.' },
        voicemailMessage: '  Call us back, {{name}}.  ',
      },
    });
    expect(created.status).toBe(201);
    const agent = (await created.json()) as { id: string; voicemailMessage: string | null };
    expect(agent.voicemailMessage).toBe('Call us back, {{name}}.');
    const cleared = await api.request('PATCH', `/agents/${agent.id}`, {
      key: owner.key,
      body: { voicemailMessage: null },
    });
    expect(((await cleared.json()) as { voicemailMessage: unknown }).voicemailMessage).toBeNull();
    const tooLong = await api.request('PATCH', `/agents/${agent.id}`, {
      key: owner.key,
      body: { voicemailMessage: 'x'.repeat(1001) },
    });
    expect(tooLong.status).toBe(400);
    const withoutOne = await api.request('POST', '/agents', {
      key: owner.key,
      body: { name: 'Plain', language: 'en-US', voiceId: 'espeak-ng/en-us', script: { openingLine: 'Hi.' } },
    });
    expect(((await withoutOne.json()) as { voicemailMessage: unknown }).voicemailMessage).toBeNull();
  });
});

describe('replayed, late and out-of-order steps of the walk', () => {
  /** A call of the shoe agent's campaign on the connection, answered, as the dial leaves it: its steps posted by hand. */
  async function answeredCall(phone: string) {
    const campaign = await campaignWithAgent('Hi {{name}}, please call us back.');
    const call = await answeredTwilioCall(db, { owner, connection, caller }, campaign, phone);
    const callSid = call.providerCallId!;
    const base = new URL(
      twilioCallbackUrl(api.baseUrl, 'twiml', { connectionId: connection.id, attemptId: call.attemptId }),
    ).pathname;
    /** A step's request as Twilio posts it, signed: 0 the answer, n question n's Gather action, or voicemail. */
    const post = async (step: number | 'voicemail', form: Record<string, string> = {}) => {
      const response = await postTwiml(
        step === 0 ? base : `${base}/${step}`,
        { CallSid: callSid, ...form },
        TWILIO_TWIN_AUTH_TOKEN,
      );
      expect(response.status).toBe(200);
      return response.text();
    };
    const turns = () =>
      db.callTurn.findMany({ where: { callId: call.id }, orderBy: [{ step: 'asc' }, { part: 'asc' }] });
    return { call, post, turns };
  }

  const lines = (turns: { speaker: string; text: string }[]) => turns.map((turn) => `${turn.speaker}: ${turn.text}`);

  it('stores each turn once and skips no question: the answer replayed, step 2 before step 1, a Gather result three times at once', async () => {
    const { post, turns } = await answeredCall('+14155569150');
    // The answer's request three times at once (Twilio's retry of a slow answer): one document, its turns once.
    const answers = await Promise.all([post(0), post(0), post(0)]);
    expect(new Set(answers).size).toBe(1);
    expect(answers[0]).toContain(QUESTIONS[0]);
    expect(answers[0]).toMatch(/action="[^"]*\/twiml\/1"/);
    // Step 2 arrives first (step 1's request held up on the way): it takes step 2's place, and its document closes.
    const second = await post(2, { SpeechResult: '3 pairs.', Confidence: '0.8' });
    expect(second).toContain('Thank you, goodbye.</Say><Hangup/>');
    // Then step 1: its answer, and question 2 asked, although step 2 came before.
    const first = await post(1, { SpeechResult: 'Navy.', Confidence: '0.9' });
    expect(first).toContain(QUESTIONS[1]);
    expect(first).toMatch(/action="[^"]*\/twiml\/2"/);
    const stored = await turns();
    // Step 1's Gather result again, three at once, one saying something else, and once with nothing heard: step 1's
    // document each time, the first answer kept.
    const again = await Promise.all([
      post(1, { SpeechResult: 'Navy.', Confidence: '0.9' }),
      post(1, { SpeechResult: 'Navy.', Confidence: '0.9' }),
      post(1, { SpeechResult: 'Crimson.', Confidence: '0.99' }),
      post(1),
    ]);
    expect(again).toEqual(Array(4).fill(first));
    // A step already passed, replayed after the last: step 1's document again, nothing stored.
    expect(await post(1, { SpeechResult: 'Green.', Confidence: '0.5' })).toBe(first);
    expect(await post(0)).toBe(answers[0]);
    expect(await turns()).toEqual(stored);
    expect(lines(stored)).toEqual([
      'agent: Hello Ana, this is the shoe shop.',
      `agent: ${QUESTIONS[0]}`,
      'lead: Navy.',
      `agent: ${QUESTIONS[1]}`,
      'lead: 3 pairs.',
      'agent: Thank you, goodbye.',
    ]);
    expect(stored.filter((turn) => turn.speaker === 'lead').map((turn) => turn.confidence)).toEqual([0.9, 0.8]);
  });

  it('leaves the voicemail message once: the voicemail step twice at once and again later, voicemailLeftAt kept', async () => {
    const { call, post, turns } = await answeredCall('+14155569157');
    const [first, second] = await Promise.all([post('voicemail'), post('voicemail')]);
    expect(second).toBe(first);
    expect(first).toContain('Hi Ana, please call us back.</Say><Hangup/>');
    const left = (await db.call.findUniqueOrThrow({ where: { id: call.id } })).voicemailLeftAt;
    expect(left).not.toBeNull();
    expect(await post('voicemail')).toBe(first);
    expect((await db.call.findUniqueOrThrow({ where: { id: call.id } })).voicemailLeftAt).toEqual(left);
    expect(lines(await turns())).toEqual(['agent: Hi Ana, please call us back.']);
  });

  it('on a live call, every step request delivered twice at once and the step before replayed late: the walk as the lead answered it, each question asked once; a detection result twice at once: one redirect', async () => {
    // Between the twin and the API: each TwiML request is sent on twice at once (the first answer goes back to the
    // twin), and before it the call's previous step request again, late. Callbacks pass as they are.
    let apiBaseUrl = '';
    const previous = new Map<string, { path: string; body: string; signature: string }>();
    let duplicates = 0;
    let lateReplays = 0;
    let detectionDuplicates = 0;
    const proxy = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const path = req.url ?? '/';
        const signature = String(req.headers['x-twilio-signature'] ?? '');
        const forward = (to: { path: string; body: string; signature: string }) =>
          fetch(`${apiBaseUrl}${to.path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': to.signature },
            body: to.body,
          });
        void (async () => {
          const request = { path, body, signature };
          const twiml = /\/twiml(\/\d+)?$/.exec(path);
          if (twiml) {
            const callPath = path.slice(0, twiml.index);
            const before = previous.get(callPath);
            if (before) {
              lateReplays += 1;
              await (await forward(before)).text();
            }
            previous.set(callPath, request);
            const [genuine, duplicate] = await Promise.all([forward(request), forward(request)]);
            duplicates += 1;
            const [text, again] = await Promise.all([genuine.text(), duplicate.text()]);
            expect(again).toBe(text);
            res.writeHead(genuine.status, { 'content-type': genuine.headers.get('content-type') ?? 'text/xml' });
            res.end(text);
            return;
          }
          // The detection's result twice at once, as a callback retried while the first is still being handled.
          const [answer, again] = await Promise.all([
            forward(request),
            ...(path.endsWith('/amd') ? [forward(request)] : []),
          ]);
          if (again) {
            detectionDuplicates += 1;
            await again.text();
          }
          res.writeHead(answer!.status, { 'content-type': answer!.headers.get('content-type') ?? 'application/json' });
          res.end(await answer!.text());
        })().catch((error: unknown) => res.writeHead(502).end(String(error)));
      });
    });
    const proxyUrl = `http://127.0.0.1:${await listenOnLoopback(proxy)}`;
    const replayed = { ...temporal, taskQueue: uniqueTaskQueue('script-replays') };
    const replayedPath = await startCarrierPath(db, {
      url,
      temporal: replayed,
      keyring,
      fallback: simulated.client,
      publicBaseUrl: proxyUrl,
      api: { conversationEngine: 'gather' },
    });
    const replayedApi = replayedPath.api;
    apiBaseUrl = replayedApi.baseUrl;
    const campaign = await campaignWithAgent(null, { via: replayedApi });
    await scriptPersona(twin.baseUrl, { number: '+14155569121', answers: ['Crimson, please.', 'Four pairs.'] });
    const { result, call } = await callLead(campaign.id, '+14155569121', replayedPath);
    expect(result).toMatchObject({ outcome: 'answered' });
    // The answer and both Gather actions went through twice at once; both actions came after a late replay.
    expect(duplicates).toBe(3);
    expect(lateReplays).toBe(2);
    const stored = await db.callTurn.findMany({
      where: { callId: call.id },
      orderBy: [{ step: 'asc' }, { part: 'asc' }],
    });
    expect(lines(stored)).toEqual([
      'agent: Hello Ana, this is the shoe shop.',
      `agent: ${QUESTIONS[0]}`,
      'lead: Crimson, please.',
      `agent: ${QUESTIONS[1]}`,
      'lead: Four pairs.',
      'agent: Thank you, goodbye.',
    ]);
    // What the twin said on the line: each question once, in order, none skipped.
    const log = await twinLog(twin.baseUrl, call.providerCallId!);
    expect(log.log.filter((entry) => entry.kind === 'say').map((entry) => entry.text)).toEqual([
      'Hello Ana, this is the shoe shop.',
      ...QUESTIONS,
      'Thank you, goodbye.',
    ]);
    expect(log.log.filter((entry) => entry.kind === 'speech').map((entry) => entry.text)).toEqual([
      'Crimson, please.',
      'Four pairs.',
    ]);
    // An answering machine on the same path: its detection result delivered twice at once redirects the call once,
    // and the message is left once.
    const machine = await campaignWithAgent('Hi {{name}}, this is the shoe shop: please call us back.', {
      questions: MACHINE_SCRIPT,
      via: replayedApi,
    });
    const voicemail = await callLead(machine.id, '+14155569127', replayedPath);
    expect(voicemail.result).toMatchObject({ outcome: 'voicemail_left' });
    expect(detectionDuplicates).toBeGreaterThanOrEqual(1);
    const onTwin = await twilioTwinRecord(db).call(voicemail.call.providerCallId!);
    expect(onTwin.redirect).toMatchObject({ seq: 1 });
    const machineLog = await twinLog(twin.baseUrl, voicemail.call.providerCallId!);
    expect(machineLog.log.filter((entry) => entry.kind === 'redirect')).toHaveLength(1);
    expect(
      machineLog.log.filter(
        (entry) => entry.kind === 'say' && entry.text === 'Hi Ana, this is the shoe shop: please call us back.',
      ),
    ).toHaveLength(1);
    expect(
      await db.callTurn.count({
        where: { callId: voicemail.call.id, text: 'Hi Ana, this is the shoe shop: please call us back.' },
      }),
    ).toBe(1);
    proxy.closeAllConnections();
    proxy.close();
  });
});
