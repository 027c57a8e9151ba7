import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CallEvent } from '../../lib/calls/call-event';
import { isTerminalCallState } from '../../lib/calls/call-states';
import { SIMULATED_TIMES } from '../../simulators/simulated-carrier/timeline';
import { SIMULATED_CARRIER_TABLES } from '../../simulators/simulated-carrier/call-store';
import { simulatedCarrierRecord, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startReceiver } from '../support/http-receiver';
import { until } from '../support/until';

/*
 * The simulated carrier's hangup against its own delivery loop (simulators/simulated-carrier/server.ts). A hangup that
 * lands while the loop takes the call's next step once lost the call's end: the loop took a step the hangup had
 * cut, and the canceled event it was owed had no place left in its timeline, so the call stayed live for the
 * receiver until its deadline (found as a stop test that hung 1 run in about 40 under load).
 */

const { db } = await useTestDatabase();
/** Ringing 50 ms after the dial: the moment each hangup below aims at. */
const TIME_SCALE = 0.05;
const carrier = await startTestCarrier(db, { timeScale: TIME_SCALE });
const receiver = await startReceiver(() => 200);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const eventsOf = (providerCallId: string) =>
  receiver.received
    .map((request) => JSON.parse(request.body) as CallEvent)
    .filter((event) => event.providerCallId === providerCallId);

/** Dials one call that reports only its answer and its end (ringing unsubscribed, as by default); its id and dial time. */
async function dial() {
  const { providerCallId } = await carrier.client.dial({
    attemptId: `${randomUUID()}:1`,
    from: null,
    to: '+14155550100',
    agent: null,
    lead: { name: null, fields: {} },
    statusCallbackUrl: receiver.url,
    statusCallbackEvents: ['in-progress'],
  });
  const { createdAt } = await simulatedCarrierRecord(db).call('"providerCallId" = $1', providerCallId);
  return { providerCallId, ringsAt: createdAt.getTime() + SIMULATED_TIMES.queuedMs * TIME_SCALE };
}

/** Each call's one terminal event is the hangup's, and the carrier's own record says the same. */
async function expectHungUp(calls: readonly string[]) {
  // None of these calls would end by itself for 1.8 s.
  await until(
    async () => calls.filter((id) => eventsOf(id).some((event) => isTerminalCallState(event.status))).length,
    (ended) => ended === calls.length,
    10_000,
  );
  for (const id of calls) {
    const terminal = eventsOf(id).filter((event) => isTerminalCallState(event.status));
    expect(terminal.map((event) => [event.status, event.reason])).toEqual([['canceled', 'hangup']]);
    expect(await carrier.client.lookup({ providerCallId: id })).toMatchObject({ status: 'canceled', reason: 'hangup' });
  }
}

describe('the simulated carrier hangs up', () => {
  it('a hangup asked before the next step but recorded after it still ends the call', async () => {
    const { providerCallId, ringsAt } = await dial();
    await sleep(ringsAt - 20 - Date.now());
    // The call's row held locked across the moment it starts to ring: the hangup is asked before, and its write waits
    // until the delivery loop has passed that moment.
    const { hangup } = await db.$transaction(async (tx) => {
      await tx.$queryRawUnsafe(
        `SELECT 1 FROM ${SIMULATED_CARRIER_TABLES.calls} WHERE "providerCallId" = $1 FOR UPDATE`,
        providerCallId,
      );
      const asked = carrier.client.hangup(providerCallId);
      await sleep(ringsAt + 40 - Date.now());
      return { hangup: asked };
    });
    await hangup;
    await expectHungUp([providerCallId]);
  });

  it('ends every call it was asked to hang up with one terminal event, whenever the hangup comes', async () => {
    // Hangups spread around the moment each call starts to ring: some before, some as the loop takes that step,
    // some after.
    const offsets = Array.from({ length: 24 }, (_, index) => (index % 12) - 8);
    const calls = await Promise.all(
      offsets.map(async (offsetMs) => {
        const { providerCallId, ringsAt } = await dial();
        await sleep(Math.max(0, ringsAt + offsetMs - Date.now()));
        await carrier.client.hangup(providerCallId);
        return providerCallId;
      }),
    );
    await expectHungUp(calls);
  });
});
