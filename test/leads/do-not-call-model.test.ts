// A spoken opt-out that a chat model does not act on (docs/features/leads.md#the-do-not-call-list), on the real
// servers: the API (ConversationRelay, the model engine through the OpenAI twin), a worker, Temporal and PostgreSQL,
// and the Twilio twin as the carrier. The twin's model calls opt_out only for its own few phrases; the product's rules
// hear more, and the relay socket acts on them whatever the model does.
import { describe, expect, it } from 'vitest';
import type { Transcript } from '../../lib/calls/transcript';
import {
  calledLead,
  insertShoeShopAgent,
  said,
  startedAgentCampaign,
  withIntelligence,
} from '../support/carrier-calls';
import { useTestDatabase } from '../support/database';
import { startOpenAiTwin, twinDialogue } from '../support/openai-twin';
import { useTemporalClient } from '../support/temporal';
import { scriptPersona } from '../support/twilio-twin';
import { connectTwinCaller, startTwilioTwinStack } from '../support/twilio-twin-stack';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const { baseURL } = await startOpenAiTwin();
const { keyring, twin, api } = await startTwilioTwinStack(
  { db, url, temporal },
  { conversationEngine: 'relay', dialogue: twinDialogue(baseURL) },
);
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view', 'agents.edit'] });
const caller = '+14155569901';
await connectTwinCaller(db, keyring, twin.baseUrl, owner.workspaceId, caller);
const agent = await insertShoeShopAgent(db, owner.workspaceId, {
  questions: ['What colour would you like for the shoes?'],
  instructions: 'You sell shoes. Ask which colour the lead would like.',
});

describe('a spoken opt-out on a model-engine call', () => {
  it('"take me off your list", which the model answers without opt_out: the call ends opted_out, the number listed', async () => {
    const phone = '+14155569912';
    await scriptPersona(twin.baseUrl, { number: phone, answers: ['Please take me off your list.', 'Goodbye.'] });
    const campaign = await startedAgentCampaign(db, api, owner, { name: 'Model', caller, agentId: agent.id });
    const { result, call } = await calledLead(db, { api, temporal }, owner, campaign.id, phone);
    expect(result).toMatchObject({ status: 'completed', outcome: 'opted_out', attempts: 1 });
    expect(call.outcome).toBe('opted_out');
    expect(
      await db.doNotCall.findUnique({ where: { workspaceId_phone: { workspaceId: owner.workspaceId, phone } } }),
    ).toMatchObject({ source: 'spoken_opt_out', callId: call.id });
    const transcript = (await withIntelligence(db, call.id)).transcript as Transcript;
    expect(said(transcript, 'lead')[0]).toBe('Please take me off your list.');
    // The model called no opt_out: the socket listed the number.
    expect(transcript.filter((turn) => turn.tool?.name === 'opt_out')).toEqual([]);
  });
});
