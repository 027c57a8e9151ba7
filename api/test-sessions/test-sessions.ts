import { randomBytes, randomUUID } from 'node:crypto';
import { ZodError } from 'zod';
import type { Prisma } from '../../generated/prisma/client';
import { lockLiveAgent } from '../../lib/agents/agent-lock';
import { holdTestSession } from '../../lib/credits/test-session-billing';
import type { TranscriptTurn } from '../../lib/calls/transcript';
import { prismaSql } from '../../lib/run-sql';
import { TEST_SESSION_MAX_LENGTH_MS } from '../../lib/test-sessions/test-session-store';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { paymentRequired } from '../credits/credits';
import type { Principal } from '../door/principal';
import { findOwned } from '../http/owned';
import type { AppServices } from '../app-services';
import { insertTestSession, lockedOpenSessionCount, sessionWithTurnsWhere, tokenHashOf } from './session-store';

/** How long a session's token opens its socket: long enough to hand it to a browser, short enough not to linger. */
export const TEST_SESSION_TOKEN_TTL_MS = 5 * 60_000;

export interface TestSessionRequest {
  agentId: string;
  lead?: { name?: string; phone?: string; fields: Record<string, unknown> };
}

const invalid = (path: string, message: string, input: unknown) =>
  new ZodError([{ code: 'custom', path: [path], message, input }]);

/** The socket's address: the API's public address (or the request's own) made ws(s)://. */
export function socketUrlOf(base: string, sessionId: string): string {
  return `${base.replace(/\/$/, '').replace(/^http/, 'ws')}/v1/test-sessions/${sessionId}/socket`;
}

/**
 * Test sessions of one workspace open at once (waiting for their socket or live), at most: each holds a socket, a
 * dialogue engine and model requests on the API; a developer tests one or two agents at a time.
 */
export const MAX_OPEN_TEST_SESSIONS = 5;

/**
 * Records a session and its credit hold in one transaction (docs/features/test-sessions.md#starting-one): the agent
 * must be a live agent of the workspace (400 invalid_body at agentId otherwise, as POST /calls/test); a balance short
 * of one minute is 402 insufficient_credits, nothing recorded. Answers the one-time token, which is stored hashed only.
 */
export async function createTestSession(
  services: AppServices,
  principal: Principal,
  request: TestSessionRequest,
  baseUrl: string,
) {
  const { workspaceId } = principal;
  const id = randomUUID();
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + TEST_SESSION_TOKEN_TTL_MS);
  await services.db
    .$transaction(async (tx) => {
      // Open sessions of the workspace are counted under its lock, so two creations never both take the last place.
      const open = await lockedOpenSessionCount(tx, workspaceId);
      if (open >= MAX_OPEN_TEST_SESSIONS)
        throw new Refusal(
          ErrorCode.rate_limited,
          {
            detail: `this workspace has ${open} test sessions open, the most at once (${MAX_OPEN_TEST_SESSIONS}): end one first`,
          },
          { retryAfterSeconds: 60 },
        );
      const agentId = await lockLiveAgent(tx, workspaceId, request.agentId);
      if (!agentId) throw invalid('agentId', 'no agent of this workspace has this id', request.agentId);
      await insertTestSession(tx, {
        id,
        workspaceId,
        agentId,
        keyId: principal.keyId,
        lead: {
          name: request.lead?.name ?? null,
          phone: request.lead?.phone ?? null,
          fields: (request.lead?.fields ?? {}) as Prisma.InputJsonValue,
        },
        tokenHash: tokenHashOf(token),
        tokenExpiresAt: expiresAt,
      });
      // Billed as a test call (lib/credits/test-session-billing.ts): the hold is taken with the session.
      await holdTestSession(
        prismaSql(tx),
        { workspaceId, sessionId: id, longestMs: TEST_SESSION_MAX_LENGTH_MS },
        { type: 'api_key', id: principal.keyId },
      );
    })
    .catch((error: unknown) => {
      throw paymentRequired(error);
    });
  return { id, url: socketUrlOf(baseUrl, id), token, expiresAt: expiresAt.toISOString() };
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** The session's state from its columns. */
function statusOf(session: { connectedAt: Date | null; endedAt: Date | null }) {
  if (session.endedAt) return 'ended' as const;
  return session.connectedAt ? ('live' as const) : ('waiting' as const);
}

/** A session of the caller's workspace with its transcript (403 forbidden for any other id, as every route). */
export async function getTestSession(services: AppServices, principal: Principal, id: string) {
  const session = await findOwned(principal, id, (where) => sessionWithTurnsWhere(services.db, where));
  const lead = session.lead as { name: string | null; phone: string | null; fields: Record<string, unknown> };
  return {
    id: session.id,
    agentId: session.agentId,
    lead: { name: lead.name ?? null, phone: lead.phone ?? null, fields: lead.fields ?? {} },
    status: statusOf(session),
    createdAt: session.createdAt.toISOString(),
    expiresAt: session.tokenExpiresAt.toISOString(),
    connectedAt: iso(session.connectedAt),
    endedAt: iso(session.endedAt),
    endReason: session.endReason,
    outcome: session.endedAt ? session.outcome : null,
    durationMs: session.durationMs,
    transcript: session.turns.map((turn): TranscriptTurn => ({
      speaker: turn.speaker as TranscriptTurn['speaker'],
      text: turn.text,
      offsetMs: turn.offsetMs,
      ...(turn.tool !== null && { tool: turn.tool as TranscriptTurn['tool'] }),
    })),
  };
}
