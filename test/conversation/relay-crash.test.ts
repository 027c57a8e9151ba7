// ConversationRelay conversations across crashes (issue 30): the leads of test/carriers/twilio-crash.test.ts, their
// answered calls held on the API's relay socket by the script engine (CONVERSATION_ENGINE=relay), while the worker or
// the API is killed with SIGKILL and started again. Every process is the production entry point. Whatever dies, every
// lead finishes, the twin placed exactly one call per attempt, every line is given back and no lead is left waiting.
import { describe, expect, it } from 'vitest';
import { sleep } from '../support/carrier-crash';
import { twilioCrashFile } from '../support/twilio-crash';
import { twilioTwinRecord } from '../support/twilio-twin';

const caller = '+14155579100';
const { db, bench, stack: relayStack } = await twilioCrashFile(caller, { CONVERSATION_ENGINE: 'relay' });
/**
 * One stack for both tests, started with the file: the first kills the worker and its restart serves the second, which
 * kills the API (each test has a campaign and numbers of its own). That spares three process starts.
 */
const stack = await relayStack('relay-crash', {});

describe('ConversationRelay conversations with a process killed with SIGKILL mid-conversation', () => {
  it('the worker: conversations go on in the API without it, the next worker finishes every lead, one call per attempt', async () => {
    const { campaignId } = await bench.expectWorkerCrashSurvived(stack, 'Relay, worker crash');
    expect(await db.call.count({ where: { campaignId, relaySocketAt: { not: null } } })).toBeGreaterThan(0);
  }, 180_000);

  it("the API: its sockets die with it; each conversation cut ends its call once (the twin's caller hangs up at the document's end), the next API takes the callbacks and every lead finishes", async () => {
    const { campaignId, leads } = await bench.campaignWithLeads(stack.apiUrl, 'Relay, API crash');
    await bench.midCall(campaignId, leads);
    await stack.api.kill();
    await sleep(1_500);
    await stack.restartApi();
    const { stored } = await bench.expectEveryLeadFinished(stack.temporal, campaignId, leads);
    await bench.expectWalksPrefixes(stored);
    // No call was ever placed twice, and no call's conversation had a second socket.
    for (const lead of stored)
      for (const call of lead.calls)
        expect(await db.call.count({ where: { attemptId: call.attemptId } }), call.attemptId).toBe(1);
    expect(await twilioTwinRecord(db).callbacksOwedFrom(caller)).toBe(0);
  }, 180_000);
});
