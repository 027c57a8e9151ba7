// An inbound call whose end callback is lost (docs/features/carriers/inbound.md#a-lost-end), on the real servers: the
// API, a worker, Temporal and PostgreSQL, and the Twilio and Telnyx twins as the carriers, which drop the call's end
// callback on request (Twilio's number StatusCallback, Telnyx's call.hangup webhook). The call's watching workflow waits for the end as an outbound call's ladder does, then asks the
// carrier: the call ends as Twilio has it, with its aftermath. A call whose callback comes ends by it, without asking.
import { describe, expect, it } from 'vitest';
import { inboundCallWorkflowId } from '../../lib/temporal/workflow-ids';
import { connectCallers, insertShoeShopAgent, TELNYX_TWIN_ACCOUNT } from '../support/carrier-calls';
import { startTestTelnyxTwin } from '../support/telnyx-twin';
import { useTestDatabase } from '../support/database';
import { inboundCalls, routedTwilioNumber } from '../support/inbound-calls';
import { useTemporalClient } from '../support/temporal';
import { twilioTwinRecord } from '../support/twilio-twin';
import { startTwilioTwinStack } from '../support/twilio-twin-stack';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
// A short deadline, as the lost-webhook tests of outbound calls have: the carrier is asked 3 s after the answer.
const { keyring, twin, api } = await startTwilioTwinStack({ db, url, temporal }, {}, { callEndDeadlineMs: 3_000 });
const twinRecord = twilioTwinRecord(db);

const number = '+14155569201';
const {
  calls: { control, endedCallOf },
} = await routedTwilioNumber({ db, api, keyring, twinBaseUrl: twin.baseUrl }, number);

// The same on Telnyx: another workspace's number on a connection to the Telnyx twin.
const telnyxTwin = await startTestTelnyxTwin(db, { timeScale: 0.04 });
const telnyxOwner = await createTestWorkspace(db, { scopes: ['agents.edit', 'phone_numbers.edit', 'calls.view'] });
const telnyxNumber = '+14155569202';
await connectCallers(
  db,
  keyring,
  {
    workspaceId: telnyxOwner.workspaceId,
    provider: 'telnyx-twin',
    baseUrl: telnyxTwin.baseUrl,
    account: TELNYX_TWIN_ACCOUNT,
  },
  telnyxNumber,
);
const telnyxAgent = await insertShoeShopAgent(db, telnyxOwner.workspaceId, {
  questions: ['What colour would you like?'],
});
const telnyx = inboundCalls({
  db,
  api,
  twinBaseUrl: telnyxTwin.baseUrl.replace(/\/v2$/, ''),
  key: telnyxOwner.key,
});
expect((await telnyx.ownedByTheAccount(telnyxNumber)).status).toBe(200);
await telnyx.routeTo(telnyxNumber, telnyxAgent.id);

/** A person calls the number at the twin; answers the carrier's id of the call. */
async function personCalls(from: string, loseStatusCallback: boolean): Promise<string> {
  const placed = await control('incoming-calls', { from, to: number, loseStatusCallback });
  expect(placed.status).toBe(201);
  return placed.body.sid as string;
}

/** The events applied to the call: a carrier's callback, or the lookup past the deadline (`lookup:`). */
const eventIdsOf = async (callId: string) =>
  (await db.callEvent.findMany({ where: { callId }, select: { eventId: true } })).map((event) => event.eventId);

describe('an inbound call watched until it ends', () => {
  it('whose end callback is lost: the carrier is asked past the deadline, the call ends as Twilio has it', async () => {
    const sid = await personCalls('+14155561301', true);
    const call = await endedCallOf(sid);
    expect(call).toMatchObject({ kind: 'inbound', direction: 'inbound', status: 'ended', outcome: 'answered' });
    expect((await twinRecord.call(sid)).status).toBe('completed');
    // Ended by the lookup: no callback of its end ever came.
    expect(await eventIdsOf(call.id)).toEqual([expect.stringMatching(/^lookup:/)]);
    const watching = temporal.client.workflow.getHandle(inboundCallWorkflowId(call.attemptId));
    expect(await watching.result()).toEqual({ callId: call.id, outcome: 'answered', durationMs: call.durationMs });
  });

  it('on Telnyx, whose call.hangup webhook is lost: the call is fetched past the deadline and ends', async () => {
    const placed = await telnyx.control('incoming-calls', {
      from: '+14155561303',
      to: telnyxNumber,
      loseHangupWebhook: true,
    });
    expect(placed.status).toBe(201);
    const call = await telnyx.endedCallOf(placed.body.sid as string);
    expect(call).toMatchObject({ direction: 'inbound', status: 'ended', outcome: 'answered', provider: 'telnyx-twin' });
    expect((await eventIdsOf(call.id)).filter((id) => id.startsWith('lookup:'))).toHaveLength(1);
    const watching = temporal.client.workflow.getHandle(inboundCallWorkflowId(call.attemptId));
    expect(await watching.result()).toMatchObject({ callId: call.id, outcome: 'answered' });
  });

  it('whose end callback comes: it ends by it, and its workflow with it, the carrier not asked', async () => {
    const sid = await personCalls('+14155561302', false);
    const call = await endedCallOf(sid);
    expect(call).toMatchObject({ kind: 'inbound', status: 'ended', outcome: 'answered' });
    const watching = temporal.client.workflow.getHandle(inboundCallWorkflowId(call.attemptId));
    expect(await watching.result()).toMatchObject({ callId: call.id, outcome: 'answered' });
    expect((await eventIdsOf(call.id)).some((id) => id.startsWith('lookup:'))).toBe(false);
  });
});

// The number's calls are all watched: none is left dialing.
it('leaves no inbound call of the number on', async () => {
  await until(
    () => db.call.count({ where: { toNumber: number, status: 'dialing' } }),
    (count) => count === 0,
  );
});
