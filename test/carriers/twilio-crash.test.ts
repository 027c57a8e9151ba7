// The Twilio path across crashes (issue 29): leads of a campaign whose caller number is bound to a twilio-twin
// connection, with calls ringing and answered (the agent's script walk running), while one process is killed with
// SIGKILL and started again: the worker, the API (which receives Twilio's callbacks and TwiML requests), the Twilio
// twin. Every process is the production entry point, on the test file's database: worker/main.ts, api/main.ts,
// simulators/twilio-twin/main.ts. Whatever dies, every lead finishes, the twin placed exactly one call per attempt
// (its own table), every line is given back and no lead is left waiting. With Twilio's default delivery (each callback
// sent once), the callbacks sent while the API is down are lost, and reconciliation (the adapter's lookup, past
// CALL_END_DEADLINE_SECONDS) ends those calls.
import { describe, expect, it } from 'vitest';
import { person, sleep } from '../support/carrier-crash';
import { twilioCrashFile } from '../support/twilio-crash';
import { twilioTwinRecord } from '../support/twilio-twin';

const caller = '+14155579000';
// The script walk's speech Gathers (CONVERSATION_ENGINE=gather); the dialogue engine's: test/conversation/relay-crash.test.ts.
const crashFile = await twilioCrashFile(caller, { CONVERSATION_ENGINE: 'gather' });
const { db, bench, stack: twilioStack } = crashFile;
/**
 * The stack of the three tests whose twin delivers until answered, started with the file: each test kills one of its
 * processes (the worker, the API, the twin) and its restart serves the next test (each test has a campaign and numbers
 * of its own), which spares three process starts a test. The test of the callbacks sent once stops it for its own.
 */
const stack = await twilioStack('twilio-crash', {});

describe('the Twilio path with a process killed with SIGKILL mid-call', () => {
  it('the worker: calls ring and talk on without it, the next worker finishes every lead, one Twilio call per attempt', async () => {
    await bench.expectWorkerCrashSurvived(stack, 'Twilio, worker crash');
  }, 180_000);

  it("the API: the twin retries its callbacks until the next API answers; a script step it could not fetch ends that call (Twilio's 11200), failed when it was the answer's (nobody heard the agent) and called again", async () => {
    const { campaignId, leads } = await bench.campaignWithLeads(stack.apiUrl, 'Twilio, API crash');
    await bench.midCall(campaignId, leads);
    await stack.api.kill();
    await sleep(1_500);
    await stack.restartApi();
    await bench.expectWalksPrefixes((await bench.expectEveryLeadFinished(stack.temporal, campaignId, leads)).stored);
    // Calls whose answer met the dead API (expectEveryLeadFinished: each failed, with no turn), when the outage caught one.
    console.log(`API crash: ${await db.call.count({ where: { campaignId, outcome: 'failed' } })} call(s) nobody heard`);
    // Every callback the twin owed was delivered: none is left, and no call needed the lookup.
    expect(await twilioTwinRecord(db).callbacksOwedFrom(caller)).toBe(0);
    expect(await bench.reconciledEvents(campaignId)).toHaveLength(0);
  }, 180_000);

  it('the twin: it goes on with its calls from its table, callbacks owed delivered after the restart, each call still placed once', async () => {
    const { campaignId, leads } = await bench.campaignWithLeads(stack.apiUrl, 'Twilio, twin crash');
    await bench.midCall(campaignId, leads);
    await stack.twin.kill();
    const killedAt = Date.now();
    // Dials fail meanwhile (refused: retried by Temporal), hang-ups and redirects too.
    await sleep(1_500);
    await stack.restartTwin();
    const { stored } = await bench.expectEveryLeadFinished(stack.temporal, campaignId, leads);
    console.log(`twin crash: every lead finished ${Date.now() - killedAt} ms after the kill`);
    for (const lead of stored.filter((each) => person(each.phone))) {
      expect(lead.calls[0]!.outcome, lead.phone).toBe('answered');
      // The twin takes its calls' programs up where they were: the whole walk, a step it fetched again stored once.
      await bench.expectWholeWalk(lead.calls[0]!.id, lead.phone);
    }
    // Nothing was lost: the callbacks the twin owed at its death were sent by its next start.
    expect(await bench.reconciledEvents(campaignId)).toHaveLength(0);
  }, 180_000);

  it("Twilio's default delivery (each callback once), the API killed: lost callbacks, and reconciliation ends those calls past the deadline", async () => {
    // Past the longest call whose hang-up comes (an unanswered number rings 6 s at 0.1), so that only a lost callback
    // leaves a call to the lookup.
    const DEADLINE_SECONDS = 10;
    // Its twin, on the connection's port, sends each callback once.
    await stack.stop();
    const lost = await twilioStack('twilio-crash-lost', { delivery: 'once', deadlineSeconds: DEADLINE_SECONDS });
    const { campaignId, leads } = await bench.campaignWithLeads(lost.apiUrl, 'Twilio, lost callbacks');
    await bench.midCall(campaignId, leads);
    await lost.api.kill();
    await sleep(1_500);
    const restartedAt = Date.now();
    await lost.restartApi();
    await bench.expectEveryLeadFinished(lost.temporal, campaignId, leads);
    console.log(
      `lost callbacks: every lead finished ${Date.now() - restartedAt} ms after the API's restart (deadline ${DEADLINE_SECONDS} s)`,
    );
    // The callbacks sent into the outage were not sent again: the calls they would have ended were ended by the lookup.
    const { reconciled, lags } = await bench.expectReconciledEnds(campaignId);
    console.log(`lost callbacks: ${reconciled.length} call(s) ended by the lookup, ${lags} after the twin ended them`);
  }, 240_000);
});
