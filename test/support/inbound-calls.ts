import { expect } from 'vitest';
import type { Transcript } from '../../lib/calls/transcript';
import type { Database } from '../../lib/database';
import { DEFAULT_DIAL_LADDER } from '../../lib/dial-ladder/dial-ladder';
import type { RunningApi } from './api';
import type { Keyring } from '../../lib/secrets/keyring';
import { insertShoeShopAgent, startedAgentCampaign } from './carrier-calls';
import { connectTwinCaller } from './twilio-twin-stack';
import { pushLeadWithWorkflow } from './lead-workflows';
import type { TestTemporal } from './temporal';
import { until } from './until';
import { createTestWorkspace, type TestWorkspace } from './workspace';

/**
 * What the inbound-call tests do (docs/features/carriers/inbound.md): give a number to the carrier twin's account, route
 * it to an agent through the API, have a person call it at the twin, and read the call the product recorded.
 */
export function inboundCalls({
  db,
  api,
  twinBaseUrl,
  key,
}: {
  db: Database;
  api: RunningApi;
  twinBaseUrl: string;
  key: string;
}) {
  async function control(path: string, body: unknown) {
    const response = await fetch(`${twinBaseUrl}/control/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  async function numberView(e164: string) {
    const response = await api.request('GET', '/phone-numbers', { key });
    const { items } = (await response.json()) as { items: { id: string; e164: string; inboundReady: boolean }[] };
    return items.find((item) => item.e164 === e164)!;
  }

  return {
    control,
    numberView,
    /** The account holds the number at the twin, as buying it at the carrier would. */
    ownedByTheAccount: (phoneNumber: string) => control('incoming-numbers', { phoneNumber }),
    async routeTo(e164: string, inboundAgentId: string | null) {
      const { id } = await numberView(e164);
      const response = await api.request('PATCH', `/phone-numbers/${id}`, { key, body: { inboundAgentId } });
      expect(response.status).toBe(200);
      return (await response.json()) as { inboundReady: boolean; inboundAgentId: string | null };
    },
    /** A person at `from` calls `to` at the twin; answers the carrier's id of the call. */
    async personCalls(from: string, to: string): Promise<string> {
      const placed = await control('incoming-calls', { from, to });
      expect(placed.status).toBe(201);
      return placed.body.sid as string;
    },
    /** The product's record of the call, once it has ended and has its intelligence. */
    endedCallOf: (providerCallId: string) =>
      until(
        () => db.call.findFirst({ where: { providerCallId } }),
        (call) => call !== null && call.status === 'ended' && call.intelligence !== null,
        60_000,
      ).then((call) => call!),
  };
}

export const agentLines = (transcript: unknown) =>
  (transcript as Transcript).filter((turn) => turn.speaker === 'agent').map((turn) => turn.text);
export const leadLines = (transcript: unknown) =>
  (transcript as Transcript).filter((turn) => turn.speaker === 'lead').map((turn) => turn.text);

/**
 * Ana, a lead of a campaign calling from `number` with a long second rung, whose first call (to `phone`, a twin number
 * that does not answer) has ended: her ladder waits for its second rung when she calls back.
 */
export async function leadWaitingForItsSecondRung(
  { db, api, temporal, owner }: { db: Database; api: RunningApi; temporal: TestTemporal; owner: TestWorkspace },
  { number, agentId, phone }: { number: string; agentId: string; phone: string },
) {
  const campaign = await startedAgentCampaign(db, api, owner, {
    name: 'Missed calls',
    caller: number,
    agentId,
    ladder: { rungs: [{ delaySeconds: 0 }, { delaySeconds: 20 }], outcomes: DEFAULT_DIAL_LADDER.outcomes },
  });
  const { leadId, handle } = await pushLeadWithWorkflow(api, owner.key, temporal.client, campaign.id, phone, {
    name: 'Ana',
  });
  await until(
    () => db.lead.findUniqueOrThrow({ where: { id: leadId } }),
    (lead) => lead.waitingFor === 'rung',
    60_000,
  );
  return { campaign, leadId, handle };
}

/**
 * A workspace whose `number`, on a connection to the Twilio twin, is held by the twin's account and routed to the shoe
 * shop's agent: a person calling it at the twin is answered by the product. Answers the workspace, its agent and the
 * inbound-call helpers of inboundCalls.
 */
export async function routedTwilioNumber(
  { db, api, keyring, twinBaseUrl }: { db: Database; api: RunningApi; keyring: Keyring; twinBaseUrl: string },
  number: string,
): Promise<{ owner: TestWorkspace; agentId: string; calls: ReturnType<typeof inboundCalls> }> {
  const owner = await createTestWorkspace(db, { scopes: ['agents.edit', 'phone_numbers.edit', 'calls.view'] });
  await connectTwinCaller(db, keyring, twinBaseUrl, owner.workspaceId, number);
  const agent = await insertShoeShopAgent(db, owner.workspaceId, { questions: ['What colour would you like?'] });
  const calls = inboundCalls({ db, api, twinBaseUrl, key: owner.key });
  await calls.ownedByTheAccount(number);
  await calls.routeTo(number, agent.id);
  return { owner, agentId: agent.id, calls };
}
