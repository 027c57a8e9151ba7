// The Telnyx path across crashes (issue 29, as test/carriers/twilio-crash.test.ts proves it for Twilio): leads of a
// campaign whose caller number is bound to a telnyx-twin connection, dialed through the Call Control adapter
// (lib/carriers/telnyx/), with calls ringing and a person's script walk under way (speak and transcription commands sent
// by the API on the twin's Ed25519-signed webhooks), while one process is killed with SIGKILL and started again: the
// worker, the API (api/carriers/telnyx-routes.ts receives the webhooks), the Telnyx twin. Every process is the
// production entry point, on the test file's database: worker/main.ts, api/main.ts, simulators/telnyx-twin/main.ts.
// Whatever dies, every lead finishes, the twin placed exactly one call per attempt (its own table, TelnyxTwinCall: a
// dial repeated with the same command_id places none), every line is given back and no lead is left waiting. With each
// webhook sent once, the ones sent while the API is down are lost, and reconciliation (GET /calls/{id}, past
// CALL_END_DEADLINE_SECONDS) ends those calls.
import { describe, expect, it } from 'vitest';
import { ensureTelnyxTwinConnection } from '../../lib/carriers/twin';
import { carrierCrashFile, sleep } from '../support/carrier-crash';
import { telnyxTwinRecord } from '../support/telnyx-twin';

/** Twin time at a tenth, as the Twilio twin's in twilio-crash (the same plan of who answers and when). */
const TIME_SCALE = '0.1';
const caller = '+14155579100';
const crashFile = await carrierCrashFile({
  caller,
  connect: (db, keyring, workspaceId, twinUrl) => ensureTelnyxTwinConnection(db, keyring, workspaceId, `${twinUrl}/v2`),
  twinCallsTo: async (db, phone) =>
    (await telnyxTwinRecord(db).calls('"to" = $1 AND "from" = $2', phone, caller)).map((call) => ({
      id: call.callControlId,
      status: call.status,
      ended: call.status === 'hangup' && call.endTime !== null,
      endedAt: call.endTime,
    })),
  // The Telnyx twin as its own process: npm run telnyx-twin.
  twin: {
    name: 'telnyx twin',
    entry: 'simulators/telnyx-twin/main.ts',
    env: (port, delivery) => ({
      TELNYX_TWIN_PORT: String(port),
      TELNYX_TWIN_TIME_SCALE: TIME_SCALE,
      TELNYX_TWIN_WEBHOOK_DELIVERY: delivery,
    }),
  },
  // The script walk's speak and transcription commands (CONVERSATION_ENGINE=gather), which these tests crash through.
  apiEnv: { CONVERSATION_ENGINE: 'gather' },
});
const { db, bench, stack: telnyxStack } = crashFile;
/**
 * The stack of the three tests whose twin delivers until answered, started with the file: each test kills one of its
 * processes (the worker, the API, the twin) and its restart serves the next test (each test has a campaign and numbers
 * of its own), which spares three process starts a test. The test of the webhooks sent once stops it for its own.
 */
const stack = await telnyxStack('telnyx-crash', {});

/**
 * Who ended the call on the twin (its log's hang-up): `agent` when the product hung up after the closing, `twin` when the
 * person did, left in silence longer than their talk time (30-39 s, 3-3.9 s here: the number's tens digit).
 */
async function hungUpBy(callControlId: string) {
  const row = await telnyxTwinRecord(db).call(callControlId);
  const hangup = (row.log as Array<{ speaker: string; kind: string; text?: string }>).find(
    (entry) => entry.kind === 'hangup',
  );
  return `${hangup?.speaker}: ${hangup?.text}`;
}

/**
 * The people's walks after an outage of the API or the twin: each stored once, in order; a cut one ended only by the
 * person, who hung up in the silence while the step's commands waited for the outage to end (Call Control holds no
 * program: the next line is the product's command, sent on the webhook the twin delivers again).
 */
async function expectWalksCutOnlyBySilence(stored: Parameters<typeof bench.expectWalksPrefixes>[0], label: string) {
  const walks = await bench.expectWalksPrefixes(stored);
  for (const walk of walks.filter((each) => !each.whole))
    expect(await hungUpBy(walk.call.providerCallId!), walk.phone).toBe('twin: normal_clearing');
  console.log(`${label}: ${walks.filter((walk) => !walk.whole).length} of ${walks.length} walks cut by the silence`);
}

/** Webhooks the twin still owes the product, for the calls from the campaign's caller. */
const undelivered = () => telnyxTwinRecord(db).webhooksOwedFrom(caller);

describe('the Telnyx path with a process killed with SIGKILL mid-call', () => {
  it('the worker: calls ring and talk on without it, the next worker finishes every lead, one Telnyx call per attempt', async () => {
    const { finishedAfterMs } = await bench.expectWorkerCrashSurvived(stack, 'Telnyx, worker crash');
    console.log(`telnyx worker crash: every lead finished ${finishedAfterMs} ms after the kill`);
  }, 180_000);

  it('the API: the twin delivers its signed webhooks again until the next API answers them, and the walks go on', async () => {
    const { campaignId, leads } = await bench.campaignWithLeads(stack.apiUrl, 'Telnyx, API crash');
    await bench.midCall(campaignId, leads);
    await stack.api.kill();
    const killedAt = Date.now();
    await sleep(1_500);
    await stack.restartApi();
    const { stored } = await bench.expectEveryLeadFinished(stack.temporal, campaignId, leads);
    console.log(`telnyx API crash: every lead finished ${Date.now() - killedAt} ms after the kill`);
    await expectWalksCutOnlyBySilence(stored, 'telnyx API crash');
    // Every webhook the twin owed was delivered: none is left, and no call needed the lookup.
    expect(await undelivered()).toBe(0);
    expect(await bench.reconciledEvents(campaignId)).toHaveLength(0);
  }, 180_000);

  it('the twin: it goes on with its calls from its table, webhooks owed delivered after the restart, each call placed once', async () => {
    const { campaignId, leads } = await bench.campaignWithLeads(stack.apiUrl, 'Telnyx, twin crash');
    await bench.midCall(campaignId, leads);
    await stack.twin.kill();
    const killedAt = Date.now();
    // Dials fail meanwhile (refused: retried by Temporal with the same command_id), and the walk's commands too.
    await sleep(1_500);
    await stack.restartTwin();
    const { stored } = await bench.expectEveryLeadFinished(stack.temporal, campaignId, leads);
    console.log(`telnyx twin crash: every lead finished ${Date.now() - killedAt} ms after the kill`);
    // The webhook whose command met the dead twin is delivered again by its next start, and commands the step again
    // (its command_ids: said once); a person left in silence meanwhile may have hung up.
    await expectWalksCutOnlyBySilence(stored, 'telnyx twin crash');
    expect(await undelivered()).toBe(0);
    expect(await bench.reconciledEvents(campaignId)).toHaveLength(0);
  }, 180_000);

  it('each webhook sent once, the API killed: lost call.hangup webhooks, and reconciliation ends those calls past the deadline', async () => {
    // Past the longest call whose hang-up comes (an unanswered number rings 6 s at 0.1), so that only a lost webhook
    // leaves a call to the lookup.
    const DEADLINE_SECONDS = 10;
    // Its twin, on the connection's port, sends each webhook once.
    await stack.stop();
    const lost = await telnyxStack('telnyx-crash-lost', { delivery: 'once', deadlineSeconds: DEADLINE_SECONDS });
    const { campaignId, leads } = await bench.campaignWithLeads(lost.apiUrl, 'Telnyx, lost webhooks');
    await bench.midCall(campaignId, leads);
    await lost.api.kill();
    await sleep(1_500);
    const restartedAt = Date.now();
    await lost.restartApi();
    await bench.expectEveryLeadFinished(lost.temporal, campaignId, leads);
    console.log(
      `telnyx lost webhooks: every lead finished ${Date.now() - restartedAt} ms after the API's restart (deadline ${DEADLINE_SECONDS} s)`,
    );
    // The webhooks sent into the outage were not sent again: the calls they would have ended were ended by the lookup.
    const { reconciled, lags } = await bench.expectReconciledEnds(campaignId);
    for (const event of reconciled) {
      const onTwin = await telnyxTwinRecord(db).call(event.call.providerCallId!);
      // Telnyx's status tells only alive or not, and the talk time: answered is completed, else no-answer.
      expect(event.call.carrierStatus).toBe(onTwin.durationSec === null ? 'no-answer' : 'completed');
    }
    console.log(
      `telnyx lost webhooks: ${reconciled.length} call(s) ended by the lookup, ${lags} after the twin ended them`,
    );
  }, 240_000);
});
