// Inbound calls on Twilio follow the conversation engine of the outbound answer (docs/features/carriers/inbound.md): with
// CONVERSATION_ENGINE=relay an inbound call's conversation runs on ConversationRelay, as an answered outbound call's
// does, with the lead's name when the caller is a lead.
import { describe, expect, it } from 'vitest';
import { insertShoeShopAgent, startedAgentCampaign } from '../support/carrier-calls';
import { useTestDatabase } from '../support/database';
import { agentLines, inboundCalls, leadLines } from '../support/inbound-calls';
import { pushLeadWithWorkflow } from '../support/lead-workflows';
import { useTemporalClient } from '../support/temporal';
import { twinLog } from '../support/twilio-twin';
import { connectTwinCaller, startTwilioTwinStack } from '../support/twilio-twin-stack';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const { keyring, twin, api } = await startTwilioTwinStack({ db, url, temporal }, { conversationEngine: 'relay' });

const owner = await createTestWorkspace(db, {
  scopes: ['campaigns.edit', 'campaigns.view', 'agents.edit', 'phone_numbers.edit', 'calls.view'],
});
const number = '+14155569201';
await connectTwinCaller(db, keyring, twin.baseUrl, owner.workspaceId, number);
const agent = await insertShoeShopAgent(db, owner.workspaceId, { questions: ['What colour would you like?'] });
const { ownedByTheAccount, routeTo, personCalls, endedCallOf } = inboundCalls({
  db,
  api,
  twinBaseUrl: twin.baseUrl,
  key: owner.key,
});
await ownedByTheAccount(number);
expect(await routeTo(number, agent.id)).toMatchObject({ inboundReady: true });

describe('inbound calls on ConversationRelay', () => {
  it('an unknown caller converses with the agent over the relay socket', async () => {
    const sid = await personCalls('+14155563456', number);
    const call = await endedCallOf(sid);
    expect(call).toMatchObject({ kind: 'inbound', direction: 'inbound', outcome: 'answered' });
    expect(call.relaySocketAt).not.toBeNull();
    expect(agentLines(call.transcript)[0]).not.toContain('Ana');
    expect(leadLines(call.transcript).length).toBeGreaterThan(0);
    // The twin held a ConversationRelay session for it.
    expect((await twinLog(twin.baseUrl, sid)).log.some((entry) => entry.kind === 'connect')).toBe(true);
  });

  it("a lead's return call knows the lead", async () => {
    const campaign = await startedAgentCampaign(db, api, owner, {
      name: 'Relay returns',
      caller: number,
      agentId: agent.id,
    });
    // Last digit 6: unanswered, so the lead's one attempt ends no_answer and its ladder is over.
    const leadPhone = '+14155562236';
    const { leadId, handle } = await pushLeadWithWorkflow(api, owner.key, temporal.client, campaign.id, leadPhone, {
      name: 'Ana',
    });
    expect(await handle.result()).toMatchObject({ status: 'failed', outcome: 'no_answer' });
    const call = await endedCallOf(await personCalls(leadPhone, number));
    expect(call).toMatchObject({
      kind: 'campaign',
      direction: 'inbound',
      leadId,
      attemptId: expect.stringMatching(/^inbound:/),
    });
    expect(agentLines(call.transcript)[0]).toContain('Ana');
  });
});
