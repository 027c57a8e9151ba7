// Inbound calls on Telnyx (docs/features/carriers/inbound.md), end to end on the real servers: the API, a worker,
// Temporal and PostgreSQL, and the Telnyx twin as the carrier. Setting a number's inbound agent puts the number on the
// connection's Call Control application and points the application's webhook URL at the product through the official
// SDK (checked against Telnyx's description); the twin then announces calls to the number, which the product answers.
import { describe, expect, it } from 'vitest';
import { TELNYX_TWIN_CONNECTION_ID } from '../../lib/carriers/twin';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { startTestCarrier } from '../support/carrier';
import {
  connectCallers,
  insertShoeShopAgent,
  SHOE_SHOP_CLOSING,
  startCarrierPath,
  TELNYX_TWIN_ACCOUNT,
} from '../support/carrier-calls';
import { useTestDatabase } from '../support/database';
import { agentLines, inboundCalls, leadWaitingForItsSecondRung, leadLines } from '../support/inbound-calls';
import { useTemporalClient } from '../support/temporal';
import { exchangeProblems, startTestTelnyxTwin } from '../support/telnyx-twin';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const keyring = keyringSchema.parse(newKeyringEntry('k1'));
const twin = await startTestTelnyxTwin(db, { timeScale: 0.04 });
const simulated = await startTestCarrier(db);
const { api } = await startCarrierPath(db, { url, temporal, keyring, fallback: simulated.client });

const owner = await createTestWorkspace(db, {
  scopes: ['campaigns.edit', 'campaigns.view', 'agents.edit', 'phone_numbers.edit', 'calls.view'],
});
const number = '+14155569401';
const connection = await connectCallers(
  db,
  keyring,
  { workspaceId: owner.workspaceId, provider: 'telnyx-twin', baseUrl: twin.baseUrl, account: TELNYX_TWIN_ACCOUNT },
  number,
);
const agent = await insertShoeShopAgent(db, owner.workspaceId, { questions: ['What colour would you like?'] });
const { ownedByTheAccount, routeTo, personCalls, endedCallOf } = inboundCalls({
  db,
  api,
  twinBaseUrl: twin.baseUrl.replace(/\/v2$/, ''),
  key: owner.key,
});

describe('pointing a number at the product on Telnyx', () => {
  it("puts the number on the connection's application and points its webhook URL at the product", async () => {
    expect((await ownedByTheAccount(number)).status).toBe(200);
    expect(await routeTo(number, agent.id)).toMatchObject({ inboundAgentId: agent.id, inboundReady: true });

    const { data } = await twin.client.phoneNumbers.list({ filter: { phone_number: number } });
    expect(data[0]).toMatchObject({ phone_number: number, connection_id: TELNYX_TWIN_CONNECTION_ID });
    const application = await twin.client.callControlApplications.retrieve(TELNYX_TWIN_CONNECTION_ID);
    expect(application.data?.webhook_event_url).toBe(`${api.baseUrl}/telephony/telnyx/${connection.id}/inbound`);
    // The twin's answers (and the test's requests) are Telnyx's, as its description publishes them.
    expect(exchangeProblems(twin.exchanges)).toEqual([]);
  });

  it('a number the account does not hold is not ready', async () => {
    const notHeld = '+14155569402';
    await connectCallers(
      db,
      keyring,
      { workspaceId: owner.workspaceId, provider: 'telnyx-twin', baseUrl: twin.baseUrl, account: TELNYX_TWIN_ACCOUNT },
      notHeld,
    );
    expect(await routeTo(notHeld, agent.id)).toMatchObject({ inboundReady: false });
  });
});

describe('inbound calls on Telnyx', () => {
  it('an unknown caller gets the agent without lead context: answered, walked, listed as inbound', async () => {
    await ownedByTheAccount(number);
    await routeTo(number, agent.id);
    const stranger = '+14155564567';
    const call = await endedCallOf(await personCalls(stranger, number));
    expect(call).toMatchObject({
      kind: 'inbound',
      direction: 'inbound',
      leadId: null,
      agentId: agent.id,
      outcome: 'answered',
      fromNumber: stranger,
      provider: 'telnyx-twin',
    });
    const said = agentLines(call.transcript);
    expect(said[0]).not.toContain('Ana');
    expect(said).toContain('What colour would you like?');
    expect(said.at(-1)).toBe(SHOE_SHOP_CLOSING);
    expect(leadLines(call.transcript).length).toBe(1);
  });

  it('a lead returning a missed call mid-ladder is reached by it, and its ladder dials no more', async () => {
    await ownedByTheAccount(number);
    await routeTo(number, agent.id);
    // Last digit 6: the twin's number that does not answer.
    const { leadId, handle } = await leadWaitingForItsSecondRung(
      { db, api, temporal, owner },
      { number, agentId: agent.id, phone: '+14155562246' },
    );
    const leadPhone = '+14155562246';
    const call = await endedCallOf(await personCalls(leadPhone, number));
    expect(call).toMatchObject({ kind: 'campaign', direction: 'inbound', leadId, attemptId: `${leadId}:2` });
    expect(agentLines(call.transcript)[0]).toBe('Hello Ana, this is the shoe shop.');
    expect(await db.lead.findUniqueOrThrow({ where: { id: leadId } })).toMatchObject({ status: 'completed' });
    expect(await handle.result()).toMatchObject({ status: 'completed', outcome: 'answered', attempts: 2 });
    expect(await db.call.count({ where: { leadId, direction: 'outbound' } })).toBe(1);
  });
});
