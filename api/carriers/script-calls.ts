import { heardOptOut, type ScriptCall, type ScriptRequest } from '../../lib/conversation/script-walk';
import { redactedTurnsOfCall } from '../../lib/compliance/compliance-store';
import type { ConversationTurn } from '../../lib/conversation/engine';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { testCallTimeLimitMs } from '../../lib/credits/test-call-billing';
import { poolSql } from '../../lib/run-sql';
import { recordsCallsOn, spokenDisclosure } from '../../lib/recordings/recording-notice';
import type { AppServices } from '../app-services';
import { markConversationOutcome } from '../conversation/conversation-tool-store';
import { tellLaddersOfOptOut } from '../../lib/temporal/do-not-call';
import {
  insertScriptTurns,
  scriptCallRow,
  talkElapsedMs,
  trimAgentTurnRow,
  type ScriptCallRow,
} from './carrier-call-store';

/**
 * What the carriers' routes share about the call a request names (docs/features/carriers.md): that it was placed
 * through the connection that signed the request, its agent and lead for the script walk, and the turns a step of the
 * walk stores. Twilio's routes (twilio-callbacks.ts) and Telnyx's (telnyx-webhooks.ts) both read and write through here.
 */

/**
 * The call of the attempt, placed through that very connection, with its agent (its dictionaries' terms as hints) and
 * its lead: a request signed by one workspace's account for another's call (or a call of another connection) is
 * unknown_call, and nothing changes.
 */
export async function scriptCallOf(
  services: AppServices,
  attemptId: string,
  connectionId: string,
): Promise<ScriptCallRow> {
  const call = await scriptCallRow(poolSql(services.sql), attemptId, connectionId);
  if (!call) throw new Refusal(ErrorCode.unknown_call);
  return call;
}

/**
 * The walk's view of the call: its agent (hints never null), its lead (a test call's from its request) and its
 * workspace's disclosure, with the recording notice when the workspace records calls (docs/features/recordings.md).
 */
export function scriptCallOfRow(call: ScriptCallRow): ScriptCall {
  const testLead = call.testLead as { name?: string | null; fields?: Record<string, unknown> } | null;
  return {
    agent: call.agent && { ...call.agent, hints: call.agent.hints ?? [] },
    lead: {
      name: call.leadName ?? testLead?.name ?? null,
      fields: ((call.leadFields ?? testLead?.fields) as Record<string, unknown> | null) ?? {},
    },
    disclosure: spokenDisclosure(
      call.disclosure,
      call.recordingEnabled && recordsCallsOn(call.provider),
      call.agent?.language,
    ),
  };
}

/**
 * How much of a test call's paid time is left (docs/features/test-calls.md#length), in the call's time: the minutes its
 * hold covers (the limit it was dialed with) less the time since the answer, counted from the carrier's in-progress
 * event or the call's first stored turn (the answer step's), whichever is earlier, on the database's clock; nothing
 * of either yet: the answer is now. Null: no paid limit (a campaign's call, a test call recorded before billing).
 * Real time is scaled as a minute is (testMinuteMs: tests on a fast carrier twin).
 */
export async function paidTimeLeftMs(services: AppServices, call: ScriptCallRow): Promise<number | null> {
  if (call.kind !== 'test') return null;
  const sql = poolSql(services.sql);
  const limitMs = await testCallTimeLimitMs(sql, { workspaceId: call.workspaceId, callId: call.id });
  if (limitMs === undefined) return null;
  const elapsedMs = await talkElapsedMs(sql, call.id);
  return limitMs - (elapsedMs ?? 0) / minuteScaleOf(services);
}

/** Real time per call time: 1, or less on a fast carrier twin (testMinuteMs). */
export const minuteScaleOf = (services: AppServices) => (services.testMinuteMs ?? 60_000) / 60_000;

/**
 * Stores a step's turns once per call, step and part, redacted first by the rules of the call's workspace
 * (docs/features/compliance.md#redaction: every transcript write goes through lib/compliance/redaction.ts redactTurns) (a replayed or out-of-order request adds and moves nothing), each
 * timed from the call's first stored turn on the database's clock; `leftMessage` marks the call voicemailLeftAt (its
 * end is then voicemail_left). Answers whether this stored anything (false: the step was stored before).
 */
export async function storeScriptTurns(
  services: AppServices,
  callId: string,
  turns: readonly ConversationTurn[],
  leftMessage: boolean,
): Promise<boolean> {
  return insertScriptTurns(
    poolSql(services.sql),
    callId,
    await redactedTurnsOfCall(poolSql(services.sql), callId, turns),
    leftMessage,
  );
}

/**
 * An interrupted answer (docs/features/conversation/relay.md#the-script-engine): the agent turn becomes what the lead heard
 * of it; a turn the lead heard nothing of (text empty) is removed.
 */
export async function trimAgentTurn(
  services: AppServices,
  callId: string,
  turn: { step: number; part: number; text: string },
): Promise<void> {
  await trimAgentTurnRow(poolSql(services.sql), callId, turn);
}

/**
 * The person asked not to be called again (docs/features/leads.md#the-do-not-call-list): the call ends opted_out and
 * its number joins the workspace's Do-Not-Call list (source spoken_opt_out, this call), as the opt_out tool does
 * (docs/features/conversation/tools.md). A test call lists no number, as that tool does not. Only while the call is
 * on; a repeat lists nothing twice.
 */
export async function markSpokenOptOut(services: AppServices, call: { id: string; kind: string }): Promise<void> {
  const sql = poolSql(services.sql);
  const { listed } = await markConversationOutcome(sql, call.id, 'opted_out', { doNotCall: call.kind !== 'test' });
  // Its other leads waiting for a later attempt end now (docs/features/dial-ladder.md#an-opt-out-ends-the-wait).
  if (listed)
    await tellLaddersOfOptOut(services.temporal, sql, { workspaceId: listed.workspaceId, phones: [listed.phone] });
}

/** A step of the walk whose answer asks not to be called again (heardOptOut: it says the opted-out line and hangs up). */
export async function endWalkOnOptOut(services: AppServices, call: ScriptCallRow, request: ScriptRequest) {
  if (heardOptOut(request)) await markSpokenOptOut(services, call);
}
