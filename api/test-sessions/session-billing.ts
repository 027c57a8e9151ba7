import { HoldAlreadySettledError } from '../../lib/credits/credit-errors';
import { prismaCreditStore, type CreditActor } from '../../lib/credits/ledger-store';
import { settleTestSessionHold } from '../../lib/credits/test-session-billing';
import { log } from '../../lib/log';
import { poolSql } from '../../lib/run-sql';
import {
  endTestSession,
  testSessionOf,
  type EndedTestSession,
  type TestSessionEndReason,
} from '../../lib/test-sessions/test-session-store';
import type { AppServices } from '../app-services';
import { unheldSessions } from './session-store';

/** The actor of the entries a session's end writes. */
export const TEST_SESSION_BILLING_ACTOR: CreditActor = { type: 'system', id: 'test-session' };

/**
 * Ends a session (once: TestSession.endedAt) and settles its hold (once: the hold's key), in that order. Should the
 * process die between the two, the session is ended and its hold pending: the worker's sweep of abandoned holds posts
 * it by the duration recorded (lib/credits/abandoned-holds.ts). Answers the session as it ended (null: it had ended
 * before, and its hold is settled by what was recorded then).
 */
export async function endAndBillSession(
  services: AppServices,
  session: { id: string; workspaceId: string },
  end: { reason: TestSessionEndReason; finished: boolean; at?: 'now' | 'last_activity' },
): Promise<EndedTestSession | null> {
  const sql = poolSql(services.sql);
  const ended = await endTestSession(sql, session.id, end);
  const durationMs = ended ? ended.durationMs : ((await testSessionOf(sql, session.id))?.durationMs ?? null);
  try {
    await settleTestSessionHold(
      prismaCreditStore(services.db),
      { workspaceId: session.workspaceId, sessionId: session.id, durationMs },
      TEST_SESSION_BILLING_ACTOR,
    );
  } catch (error) {
    if (!(error instanceof HoldAlreadySettledError)) throw error;
  }
  return ended;
}

/**
 * Sessions nobody holds any more, ended and billed by any API process (docs/features/test-sessions.md#billing):
 * - a token never used and expired: `never_connected`, its hold voided;
 * - a connected session silent for longer than the idle timeout and a margin: the process that held its socket
 *   died (a live one ends it at the idle timeout), so it is ended `abandoned` at its last frame and billed up to
 *   there.
 * Answers how many it ended.
 */
export async function sweepTestSessions(
  services: AppServices,
  options: { silentForMs: number; limit?: number },
): Promise<number> {
  const sql = poolSql(services.sql);
  const rows = await unheldSessions(sql, options.silentForMs, options.limit ?? 100);
  let ended = 0;
  for (const row of rows) {
    try {
      const result = await endAndBillSession(services, row, {
        reason: row.connected ? 'abandoned' : 'never_connected',
        finished: false,
        at: 'last_activity',
      });
      if (result) ended++;
    } catch (error) {
      log.error({ err: error, sessionId: row.id }, 'test session sweep: ending a session failed');
    }
  }
  return ended;
}
