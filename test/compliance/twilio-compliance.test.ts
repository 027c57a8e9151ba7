// Compliance on a real call (docs/features/compliance.md): a Twilio-twin call through the Gather walk, on the real
// servers (the API, a worker, Temporal and PostgreSQL), of a workspace with a disclosure and card and e-mail redaction
// on. The twin's log is what was said on the line; the stored transcript is what the product kept.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Transcript } from '../../lib/calls/transcript';
import { createApiKey } from '../../lib/door/workspace-admin';
import { said, withIntelligence } from '../support/carrier-calls';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { startedLeadWorkflow } from '../support/lead-workflows';
import { useTemporalClient } from '../support/temporal';
import { scriptPersona, twinLog } from '../support/twilio-twin';
import { connectTwinCaller, startTwilioTwinStack } from '../support/twilio-twin-stack';
import { createTestWorkspace } from '../support/workspace';
import { transitionCampaign } from '../support/campaign-transition';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
// The disclosure on the script walk's speech Gathers (CONVERSATION_ENGINE=gather), whose TwiML these tests read.
const { keyring, twin, api } = await startTwilioTwinStack({ db, url, temporal }, { conversationEngine: 'gather' });

const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view'] });
// A second key of the owner issued without scopes: every /v1 endpoint, PUT /v1/compliance included.
const { key: fullKey } = await createApiKey(db, owner.memberId);
const caller = '+14155579001';
await connectTwinCaller(db, keyring, twin.baseUrl, owner.workspaceId, caller);

const DISCLOSURE = 'This call is recorded and handled by an AI assistant.';
const QUESTIONS = ['Which card would you like to pay with?', 'Where should we send the receipt?'];

describe('compliance on a Twilio call through the Gather walk', () => {
  it('says the disclosure first and stores it as the first agent turn; a card number and an e-mail address are masked before they are stored', async () => {
    const put = await api.request('PUT', '/v1/compliance', {
      key: fullKey,
      body: {
        disclosure: DISCLOSURE,
        redaction: { cardNumbers: true, emailAddresses: true, usSocialSecurityNumbers: false, ibans: false },
      },
    });
    expect(put.status).toBe(200);
    const agent = await db.agent.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Payments',
        language: 'en-US',
        voiceId: 'espeak-ng/en-us',
        script: { openingLine: 'Hello {{name}}, this is the shoe shop.', questions: QUESTIONS, closing: 'Goodbye.' },
      },
    });
    const campaign = await db.campaign.create({
      data: {
        workspaceId: owner.workspaceId,
        name: 'Compliance',
        acceptsLeadPush: true,
        dialLadder: SINGLE_ATTEMPT,
        callingWindow: ALWAYS_OPEN,
        callerNumbers: [caller],
        agentId: agent.id,
      },
    });
    await transitionCampaign(api, owner.key, campaign.id, 'start');
    const phone = '+14155579101';
    const card = '4111 1111 1111 1111';
    await scriptPersona(twin.baseUrl, {
      number: phone,
      answers: [
        { speech: `My card is ${card}.`, confidence: 0.9 },
        { speech: 'Send it to ana@example.com please.', confidence: 0.9 },
      ],
    });
    const idempotencyKey = randomUUID();
    const pushed = await api.request('POST', `/v1/campaigns/${campaign.id}/leads`, {
      key: owner.key,
      body: { lead: { phone, name: 'Ana' }, idempotencyKey },
    });
    expect(pushed.status).toBe(202);
    const { leadId } = (await pushed.json()) as { leadId: string };
    await (await startedLeadWorkflow(temporal.client, campaign.id, idempotencyKey)).result();
    const call = await db.call.findFirstOrThrow({ where: { leadId } });

    // Stored turns: the disclosure first, the lead's answers masked.
    const turns = await db.callTurn.findMany({
      where: { callId: call.id },
      orderBy: [{ step: 'asc' }, { part: 'asc' }],
    });
    expect(turns.map(({ step, part, speaker, text }) => ({ step, part, speaker, text }))).toEqual([
      { step: 0, part: 1, speaker: 'agent', text: DISCLOSURE },
      { step: 0, part: 2, speaker: 'agent', text: 'Hello Ana, this is the shoe shop.' },
      { step: 0, part: 3, speaker: 'agent', text: QUESTIONS[0] },
      { step: 1, part: 0, speaker: 'lead', text: 'My card is [card number].' },
      { step: 1, part: 2, speaker: 'agent', text: QUESTIONS[1] },
      { step: 2, part: 0, speaker: 'lead', text: 'Send it to [email address] please.' },
      { step: 2, part: 2, speaker: 'agent', text: 'Goodbye.' },
    ]);
    // The call's transcript (made from the turns at its end) holds no card number either.
    const done = await withIntelligence(db, call.id);
    const transcript = done.transcript as Transcript;
    expect(said(transcript, 'agent')[0]).toBe(DISCLOSURE);
    expect(JSON.stringify(transcript)).not.toContain('4111');
    expect(JSON.stringify(transcript)).not.toContain('ana@example.com');
    // On the line, the disclosure was said first, before the opening line; the lead really said the card number.
    const log = await twinLog(twin.baseUrl, call.providerCallId!);
    const says = log.log.filter((entry) => entry.kind === 'say').map((entry) => entry.text);
    expect(says.slice(0, 2)).toEqual([DISCLOSURE, 'Hello Ana, this is the shoe shop.']);
    expect(log.log.filter((entry) => entry.kind === 'speech').map((entry) => entry.text)[0]).toContain(card);
  });
});
