import { randomUUID } from 'node:crypto';
import { ZodError } from 'zod';
import type { Prisma } from '../../generated/prisma/client';
import { MAX_CALL_LENGTH_MS } from '../../lib/calls/call-deadline';
import { lockLiveAgent } from '../../lib/agents/agent-lock';
import { callerConnection, unboundNumbers } from '../../lib/carrier-connections/carrier-store';
import { unboundCallerRefusal } from '../../lib/carrier-connections/simulator-stand-in';
import { voidHold } from '../../lib/credits/holds';
import { prismaCreditStore } from '../../lib/credits/ledger-store';
import { holdTestCall, testCallHoldKey } from '../../lib/credits/test-call-billing';
import { prismaSql } from '../../lib/run-sql';
import { testCallAttemptId, type TestCallInput } from '../../lib/test-calls/test-call';
import { ErrorCode } from '../../lib/error-codes';
import { storedCapabilities } from '../../lib/phone-numbers/phone-numbers';
import { startTestCall } from '../../lib/temporal/test-calls';
import { testCallWorkflowId } from '../../lib/temporal/workflow-ids';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import { paymentRequired } from '../credits/credits';
import type { AppServices } from '../app-services';
import {
  callOfAttempt,
  deleteUndialedCall,
  insertCallOnce,
  isOnDoNotCall,
  numbersOfWorkspace,
  recordedCallOfAttempt,
} from './test-call-store';

export interface TestCallRequest {
  agentId: string;
  to: string;
  from?: string;
  lead?: { name?: string; fields: Record<string, unknown> };
}

/** The carrier test calls are recorded for when the services name none: the one FALLBACK_CARRIER there is. */
const DEFAULT_FALLBACK_CARRIER = 'simulated';

const invalid = (path: string, message: string, input: unknown) =>
  new ZodError([{ code: 'custom', path: [path], message, input }]);

/**
 * The caller number: the one asked for, if it is a voice number of the workspace; else the first voice number, or
 * null. While SIMULATORS is disabled (docs/configuration.md#simulators), only a number bound to a carrier connection:
 * the first such voice number when none is asked for, and 409 no_carrier_connection when there is none, or when the one
 * asked for is bound to none.
 */
async function callerNumber(
  tx: Prisma.TransactionClient,
  simulators: AppServices['simulators'],
  workspaceId: string,
  from: string | undefined,
) {
  const numbers = await numbersOfWorkspace(tx, workspaceId, from);
  const voice = numbers.filter((number) => storedCapabilities(number.capabilities).voice).map(({ e164 }) => e164);
  if (from !== undefined && voice.length === 0)
    throw invalid(
      'from',
      numbers.length
        ? `${from} has no voice capability: calls cannot be placed from it`
        : `${from} is not a phone number of this workspace (GET /phone-numbers)`,
      from,
    );
  if (simulators !== 'disabled') return voice[0] ?? null;
  const unbound = new Set(await unboundNumbers(prismaSql(tx), workspaceId, voice));
  const bound = voice.find((e164) => !unbound.has(e164));
  if (bound === undefined) throw unboundCallerRefusal(from ?? null);
  return bound;
}

/**
 * Records a test call and starts its workflow (workflows/test-calls/test-call.ts); answers its id, and whether a
 * call was already placed under the same Idempotency-Key (then nothing new is placed or started, beyond
 * starting that call's workflow again should its first start have been lost). The agent is held against
 * deletion while the call is recorded. A number on the Do-Not-Call list: 409, nothing recorded. The call
 * is billed: its hold is taken in the same transaction (lib/credits/test-call-billing.ts); a balance that
 * does not cover one minute is 402 insufficient_credits, nothing recorded or dialed.
 */
export async function placeTestCall(
  services: AppServices,
  principal: Principal,
  request: TestCallRequest,
  idempotencyKey: string | undefined,
): Promise<{ callId: string; deduplicated: boolean }> {
  const { db, temporal, taskQueue } = services;
  const { workspaceId } = principal;
  const newId = randomUUID();
  const attemptId = testCallAttemptId(workspaceId, idempotencyKey, newId);
  const recorded = await db
    .$transaction(async (tx) => {
      const earlier = await callOfAttempt(tx, attemptId);
      if (earlier) return { ...earlier, deduplicated: true };
      const agentId = await lockLiveAgent(tx, workspaceId, request.agentId);
      if (!agentId) throw invalid('agentId', 'no agent of this workspace has this id', request.agentId);
      const fromNumber = await callerNumber(tx, services.simulators, workspaceId, request.from);
      if (await isOnDoNotCall(tx, workspaceId, request.to))
        throw new Refusal(ErrorCode.number_on_do_not_call, {
          detail: `${request.to} is on the workspace's Do-Not-Call list`,
        });
      const workflowId = testCallWorkflowId(newId);
      // As a campaign's call from the number (takeLine): through its live carrier connection, recording the
      // connection's provider; a number bound to none, through the carrier the services name (the simulated one).
      const connection = fromNumber === null ? null : await callerConnection(prismaSql(tx), workspaceId, fromNumber);
      const inserted = await insertCallOnce(tx, {
        id: newId,
        workspaceId,
        kind: 'test',
        toNumber: request.to,
        testLead: {
          name: request.lead?.name ?? null,
          fields: (request.lead?.fields ?? {}) as Prisma.InputJsonValue,
        },
        attempt: 1,
        attemptId,
        provider: connection?.provider ?? services.telephonyProvider ?? DEFAULT_FALLBACK_CARRIER,
        carrierConnectionId: connection?.id ?? null,
        status: 'dialing',
        startedAt: new Date(),
        workflowId,
        agentId,
        fromNumber,
      });
      if (inserted) {
        // Free where simulators are enabled for development and the simulated carrier places it
        // (docs/configuration.md#simulators): no hold, so nothing is charged and it talks up to the longest call.
        if (connection === null && services.simulators === 'enabled')
          return { id: newId, workflowId, deduplicated: false };
        // Billed (docs/features/credits.md): the hold is taken with the call, before it is dialed; a balance short
        // of one minute refuses the call (402) and the transaction records nothing.
        await holdTestCall(
          prismaSql(tx),
          { workspaceId, callId: newId, longestCallMs: MAX_CALL_LENGTH_MS },
          { type: 'api_key', id: principal.keyId },
        );
        return { id: newId, workflowId, deduplicated: false };
      }
      // The same key, concurrently: the other request recorded the call.
      const other = await recordedCallOfAttempt(tx, attemptId);
      return { ...other, deduplicated: true };
    })
    .catch((error: unknown) => {
      throw paymentRequired(error);
    });
  try {
    const input: TestCallInput = { callId: recorded.id };
    // Already started (a retried request) is no failure (lib/temporal/test-calls.ts).
    await startTestCall(temporal, taskQueue, { workflowId: recorded.workflowId!, workspaceId }, input);
  } catch (error) {
    // Never started, never dialed: withdrawn, so a call without a workflow is not left dialing.
    if (!recorded.deduplicated) {
      await deleteUndialedCall(db, recorded.id);
      // Its hold goes back; should that fail too, the sweep of abandoned holds voids it
      // (docs/features/credits.md, "The sweep").
      await voidHold(prismaCreditStore(db), {
        workspaceId,
        idempotencyKey: testCallHoldKey(recorded.id),
        actor: { type: 'api_key', id: principal.keyId },
      }).catch(() => {});
    }
    throw error;
  }
  return { callId: recorded.id, deduplicated: recorded.deduplicated };
}
