import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Transcript } from '../../lib/calls/transcript';
import type { Database } from '../../lib/database';
import { until } from './until';
import type { TestWorkspace } from './workspace';

/** What the carrier adapters' tests (test/carriers/twilio-*.test.ts, telnyx-*.test.ts) share about calls and leads. */

/**
 * A call recorded as dialing on a connection, as the ladder leaves it after the dial, for callbacks and webhooks sent
 * by hand: its campaign (running, one call in flight), its lead, and the call (bound to `providerCallId`, or not yet).
 */
export async function recordDialingCall(
  db: Database,
  side: { owner: TestWorkspace; connection: { id: string }; caller: string },
  { provider, providerCallId }: { provider: string; providerCallId: string | null },
) {
  const campaign = await db.campaign.create({
    data: { workspaceId: side.owner.workspaceId, name: 'Callbacks', status: 'RUNNING', callsInFlight: 1 },
  });
  const leadId = randomUUID();
  await db.lead.create({
    data: {
      id: leadId,
      workspaceId: side.owner.workspaceId,
      campaignId: campaign.id,
      idempotencyKey: leadId,
      phone: '+14155550120',
      workflowId: `no-such-workflow-${leadId}`,
      requestId: randomUUID(),
    },
  });
  return db.call.create({
    data: {
      workspaceId: side.owner.workspaceId,
      campaignId: campaign.id,
      leadId,
      attempt: 1,
      attemptId: `${leadId}:1`,
      provider,
      carrierConnectionId: side.connection.id,
      providerCallId,
      carrierStatus: providerCallId ? 'queued' : null,
      status: 'dialing',
      startedAt: new Date(),
      workflowId: `no-such-workflow-${leadId}`,
      fromNumber: side.caller,
      toNumber: '+14155550120',
    },
  });
}

/** The call once its call intelligence is stored (it starts when the call has ended). */
export const withIntelligence = (db: Database, callId: string) =>
  until(
    () => db.call.findUniqueOrThrow({ where: { id: callId } }),
    (call) => call.intelligence !== null,
  );

/** What one side said in a transcript, in order. */
export const said = (transcript: Transcript, speaker: 'agent' | 'lead') =>
  transcript.filter((turn) => turn.speaker === speaker).map((turn) => turn.text);

type PushedLead = { leadId: string; handle: { result(): Promise<unknown> } };

/**
 * The three-rung ladder through a carrier's twin (last digits 5 busy, 6 no answer, 2 a person, 7 a machine, 9 no such
 * number): busy and no-answer numbers three calls each, the answered one one, a machine three voicemails, the unknown
 * number one call invalid_number; each call's outcome, carrier state and answeredBy as the carrier's mapping says.
 * `push` pushes a lead of a campaign on QUICK_LADDER to the number `prefix` + the digit.
 */
export async function expectThreeRungLadder(
  db: Database,
  push: (phone: string) => Promise<PushedLead>,
  prefix: string,
) {
  const busy = await push(`${prefix}5`);
  const unanswered = await push(`${prefix}6`);
  const answered = await push(`${prefix}2`);
  const machine = await push(`${prefix}7`);
  const invalid = await push(`${prefix}9`);
  expect(await busy.handle.result()).toMatchObject({ outcome: 'busy', attempts: 3 });
  expect(await unanswered.handle.result()).toMatchObject({ outcome: 'no_answer', attempts: 3 });
  expect(await answered.handle.result()).toEqual({ status: 'completed', outcome: 'answered', attempts: 1 });
  expect(await machine.handle.result()).toMatchObject({ outcome: 'voicemail', attempts: 3 });
  expect(await invalid.handle.result()).toMatchObject({ outcome: 'invalid_number', attempts: 1 });
  const outcomes = async (leadId: string) =>
    (await db.call.findMany({ where: { leadId }, orderBy: { attempt: 'asc' } })).map((call) => [
      call.outcome,
      call.carrierStatus,
      call.answeredBy,
    ]);
  expect(await outcomes(busy.leadId)).toEqual(Array(3).fill(['busy', 'busy', null]));
  expect(await outcomes(unanswered.leadId)).toEqual(Array(3).fill(['no_answer', 'no-answer', null]));
  expect(await outcomes(answered.leadId)).toEqual([['answered', 'completed', 'human']]);
  expect(await outcomes(machine.leadId)).toEqual(Array(3).fill(['voicemail', 'completed', 'machine']));
  expect(await outcomes(invalid.leadId)).toEqual([['invalid_number', 'failed', null]]);
}

/**
 * The transcript of a script walk in which the lead answered every question: the agent's opening, each question then
 * the lead's answer (with its confidence), the closing; its turns timed in order, the last after the first.
 */
export function expectAnsweredWalk(
  transcript: Transcript,
  expected: { agent: string[]; lead: Array<{ text: string; confidence: number | null }> },
) {
  expect(said(transcript, 'lead')).toEqual(expected.lead.map((answer) => answer.text));
  expect(said(transcript, 'agent')).toEqual(expected.agent);
  expect(transcript.map((turn) => turn.speaker)).toEqual([
    'agent',
    ...expected.lead.flatMap(() => ['agent', 'lead']),
    'agent',
  ]);
  expect(transcript.filter((turn) => turn.speaker === 'lead').map((turn) => turn.confidence ?? null)).toEqual(
    expected.lead.map((answer) => answer.confidence),
  );
  const offsets = transcript.map((turn) => turn.offsetMs);
  expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
  expect(offsets.at(-1)).toBeGreaterThan(0);
}
