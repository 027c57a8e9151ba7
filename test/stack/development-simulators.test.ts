// A development stack (SIMULATORS enabled, as `npm start` runs it: docs/configuration.md#simulators), on the real
// servers: the simulated carrier and the simulated WhatsApp provider stand in for a number and a sender bound to no
// connection, their calls and messages are never charged (a workspace without credits places and sends them), and the
// campaign's KPIs count what a simulator carried; every view of those calls and messages marks them `simulated`.
import { describe, expect, it } from 'vitest';
import { insertAgent } from '../support/agents';
import { useTestDatabase } from '../support/database';
import { ALWAYS_OPEN, SINGLE_ATTEMPT } from '../support/ladders';
import { pushLeadWithWorkflow } from '../support/lead-workflows';
import { uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { connectedSender, reviewedTemplate, startWhatsAppStack } from '../support/whatsapp-stack';
import { createTestWorkspace } from '../support/workspace';
import { assignPhoneNumber } from '../../lib/phone-numbers/phone-numbers';
import { transitionCampaign } from '../support/campaign-transition';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient(uniqueTaskQueue('dev-simulators'));
const { api } = await startWhatsAppStack(db, url, temporal, { simulators: 'enabled' });

const SCOPES = [
  'campaigns.edit',
  'campaigns.view',
  'calls.test',
  'calls.view',
  'whatsapp.send',
  'whatsapp.edit',
  'whatsapp.view',
];

async function getJson(key: string, path: string): Promise<any> {
  const response = await api.request('GET', path, { key });
  expect(response.status, path).toBe(200);
  return response.json();
}
let numbers = 0;
const nextNumber = () => `+1415557${String(1000 + numbers++).padStart(4, '0')}`;

/** A workspace with no credits at all, an agent and a voice number bound to no carrier connection. */
async function setUp() {
  const owner = await createTestWorkspace(db, { scopes: SCOPES });
  const agent = await insertAgent(db, owner.workspaceId);
  const caller = nextNumber();
  await assignPhoneNumber(db, owner.workspaceId, caller);
  return { owner, agent, caller };
}

const ledgerOf = (workspaceId: string) => db.creditLedgerEntry.count({ where: { workspaceId } });

describe('simulators enabled for development', () => {
  it('places a test call through the simulated carrier without any credit, and charges nothing', async () => {
    const { owner, agent, caller } = await setUp();
    const placed = await api.request('POST', '/calls/test', {
      key: owner.key,
      body: { agentId: agent.id, to: '+14155550110', from: caller },
    });
    expect(placed.status).toBe(202);
    const { callId } = (await placed.json()) as { callId: string };
    const call = await until(
      () => db.call.findUniqueOrThrow({ where: { id: callId } }),
      (row) => row.status === 'ended',
    );
    expect(call).toMatchObject({ provider: 'simulated', fromNumber: caller, outcome: 'answered' });
    expect(await ledgerOf(owner.workspaceId)).toBe(0);
    expect(await getJson(owner.key, `/calls/${callId}`)).toMatchObject({ provider: 'simulated', simulated: true });
  });

  it('sends a message through the simulated provider without any credit, and charges nothing', async () => {
    const { owner } = await setUp();
    const sender = await connectedSender(db, owner, nextNumber());
    const template = await reviewedTemplate(api, owner, { name: 'dev_hello', body: 'Hello {{1}}' });
    expect(template.status).toBe('APPROVED');
    const sent = await api.request('POST', '/whatsapp/messages', {
      key: owner.key,
      body: { senderId: sender.id, to: '+14155550121', template: { id: template.id, variables: ['Ada'] } },
    });
    expect(sent.status).toBe(202);
    const { message } = (await sent.json()) as { message: { id: string; simulated: boolean } };
    expect(message.simulated).toBe(true);
    await until(
      () => db.whatsAppMessage.findUniqueOrThrow({ where: { id: message.id } }),
      (row) => row.status === 'delivered' || row.status === 'read',
    );
    expect(await ledgerOf(owner.workspaceId)).toBe(0);
    const { items } = await getJson(owner.key, `/whatsapp/messages?senderId=${sender.id}`);
    expect(items).toEqual([expect.objectContaining({ id: message.id, simulated: true })]);
  });

  it("takes an unbound caller number for a campaign, and counts its simulated calls in the campaign's KPIs", async () => {
    const { owner, agent, caller } = await setUp();
    const created = await api.request('POST', '/campaigns', {
      key: owner.key,
      body: {
        name: 'Development',
        kind: 'CLASSIC',
        channel: 'VOICE',
        acceptsLeadPush: true,
        callerNumbers: [caller],
        agentId: agent.id,
        dialLadder: SINGLE_ATTEMPT,
        callingWindow: ALWAYS_OPEN,
      },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    await transitionCampaign(api, owner.key, id, 'start');
    const lead = await pushLeadWithWorkflow(api, owner.key, temporal.client, id, '+14155550132');
    await lead.handle.result();
    const kpis = (await (await api.request('GET', `/campaigns/${id}/kpis`, { key: owner.key })).json()) as Record<
      string,
      unknown
    >;
    expect(kpis).toMatchObject({ placed: 1, simulatedPlaced: 1 });
    const result = await getJson(owner.key, `/v1/results/${lead.leadId}`);
    expect(result.calls).toEqual([expect.objectContaining({ provider: 'simulated', simulated: true })]);
    const calls = await getJson(owner.key, `/calls?campaignId=${id}`);
    expect(calls.items).toEqual([expect.objectContaining({ leadId: lead.leadId, simulated: true })]);
  });
});
