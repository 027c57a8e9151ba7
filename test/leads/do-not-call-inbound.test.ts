// An opt-out on an inbound call (docs/features/leads.md#the-do-not-call-list), on the real servers through the Twilio
// twin: the caller's number is listed, never the workspace's own number the call came in on (an inbound call's
// toNumber), on the script walk and by the call intelligence's rule alike.
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../support/database';
import { routedTwilioNumber } from '../support/inbound-calls';
import { useTemporalClient } from '../support/temporal';
import { scriptPersona } from '../support/twilio-twin';
import { startTwilioTwinStack } from '../support/twilio-twin-stack';
import { until } from '../support/until';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const { keyring, twin, api } = await startTwilioTwinStack({ db, url, temporal }, { conversationEngine: 'gather' });

const number = '+14155569301';
const {
  owner,
  calls: { personCalls, endedCallOf },
} = await routedTwilioNumber({ db, api, keyring, twinBaseUrl: twin.baseUrl }, number);

describe('an inbound caller who opts out', () => {
  it("is listed by the caller's number, with the call; the workspace's own number is not", async () => {
    const caller = '+14155561501';
    await scriptPersona(twin.baseUrl, { number: caller, answers: ['Please stop calling me.'] });
    const sid = await personCalls(caller, number);
    const call = await endedCallOf(sid);
    expect(call).toMatchObject({ direction: 'inbound', fromNumber: caller, toNumber: number, outcome: 'opted_out' });
    const listed = await until(
      () => db.doNotCall.findMany({ where: { workspaceId: owner.workspaceId } }),
      (rows) => rows.length > 0,
    );
    expect(listed).toEqual([expect.objectContaining({ phone: caller, source: 'spoken_opt_out', callId: call.id })]);
  });
});
