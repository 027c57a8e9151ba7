import { NOW_UTC } from '../../lib/calls/call-lines';
import { ANSWER_TIMEOUT_SECONDS } from '../../lib/carriers/script-walk';
import { log } from '../../lib/log';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import type { AppServices } from '../app-services';
import { scriptCallOf } from './script-calls';
import { openTelnyxConnection, walkTelnyxStep } from './telnyx-walk';

/**
 * A question nobody answers on Telnyx (docs/features/carriers.md#a-question-nobody-answers-on-telnyx). Twilio's Gather
 * times out by itself and posts its action with nothing heard; Call Control's transcription has no timeout and Telnyx
 * no timer, so the product keeps one, in the database: a question's `call.speak.ended` arms its wait ("CallQuestionWait",
 * due ANSWER_TIMEOUT_SECONDS later), and a sweep that every API process runs claims the waits past due whose question
 * has no answer stored, with one UPDATE ... RETURNING (rows locked SKIP LOCKED: two processes never claim the same),
 * and walks the question's step with nothing heard: "(no answer)", then the next question or the closing, exactly as a
 * transcript would have. A claim is a lease, not a removal: a process that dies after claiming leaves the wait due
 * again LEASE_SECONDS later, and the step it walks again is stored and said once (turns keyed by call, step and part;
 * speaks by command_id). A transcript that comes after the walk went on finds its question's answer stored and changes
 * nothing; one that comes first leaves the wait to lapse unwalked.
 */

/** How long a claimed wait is left to its process before another may walk it again. */
const LEASE_SECONDS = 30;
/** Waits claimed per pass; a full batch sweeps again at once. */
const SWEEP_BATCH = 100;

/** The wait for an answer, unless the services say otherwise (tests on a fast twin): Twilio's Gather timeout. */
export const answerTimeoutMsOf = (services: AppServices) =>
  services.telnyxAnswerTimeoutMs ?? ANSWER_TIMEOUT_SECONDS * 1_000;

/**
 * Question `step` of the call has been said: its answer is awaited until the timeout from now. Only forward: a wait
 * for a later question is not put back by an earlier one's late webhook, and nothing is armed once the question's
 * answer is stored (the transcript came first, or the timeout already walked on). The same question's speak ending
 * again (a copy of the webhook, or the end of a line said before it that carries its client_state) moves the due time
 * later, never earlier, while it is still awaited. Answers whether a wait was armed or moved.
 */
export async function armQuestionWait(services: AppServices, callId: string, step: number): Promise<boolean> {
  const rows = await poolSql(services.sql)<{ step: number }>(
    {
      name: 'telnyx_question_wait_arm',
      text: `INSERT INTO "CallQuestionWait" ("callId", step, "dueAt")
             SELECT $1::uuid, $2, ${NOW_UTC} + make_interval(secs => $3)
              WHERE NOT EXISTS (SELECT 1 FROM "CallTurn" t WHERE t."callId" = $1::uuid AND t.step = $2 AND t.part = 0)
             ON CONFLICT ("callId") DO UPDATE
                SET step = EXCLUDED.step,
                    "dueAt" = greatest(CASE WHEN "CallQuestionWait".step = EXCLUDED.step THEN "CallQuestionWait"."dueAt" END,
                                       EXCLUDED."dueAt")
              WHERE "CallQuestionWait".step < EXCLUDED.step
                 OR ("CallQuestionWait".step = EXCLUDED.step AND "CallQuestionWait"."dueAt" IS NOT NULL)
             RETURNING step`,
    },
    callId,
    step,
    answerTimeoutMsOf(services) / 1_000,
  );
  return rows.length > 0;
}

interface ClaimedWait {
  callId: string;
  step: number;
  /** The call is on and the question has no answer: to walk. Otherwise the wait was just cleared. */
  unanswered: boolean;
  attemptId: string;
  connectionId: string | null;
  callControlId: string | null;
}

/**
 * Claims the waits past due, at most `limit`: each one whose call is on and whose question has no answer is leased
 * (due again LEASE_SECONDS from now) and answered to be walked; the others (answered, or the call ended) are cleared.
 * One statement: the rows are locked SKIP LOCKED, so a wait is claimed by one process only.
 */
async function claimDueWaits(services: AppServices, limit: number): Promise<ClaimedWait[]> {
  return poolSql(services.sql)<ClaimedWait>(
    {
      name: 'telnyx_question_waits_claim',
      text: `WITH due AS (
               SELECT w."callId",
                      c.status = 'dialing' AND NOT EXISTS (
                        SELECT 1 FROM "CallTurn" t WHERE t."callId" = w."callId" AND t.step = w.step AND t.part = 0
                      ) AS unanswered
                 FROM "CallQuestionWait" w JOIN "Call" c ON c.id = w."callId"
                WHERE w."dueAt" <= ${NOW_UTC}
                ORDER BY w."dueAt" LIMIT $1
                  FOR UPDATE OF w SKIP LOCKED)
             UPDATE "CallQuestionWait" w
                SET "dueAt" = CASE WHEN due.unanswered THEN ${NOW_UTC} + make_interval(secs => $2) END
               FROM due, "Call" c
              WHERE w."callId" = due."callId" AND c.id = w."callId"
             RETURNING w."callId"::text AS "callId", w.step, due.unanswered, c."attemptId",
                       c."carrierConnectionId"::text AS "connectionId", c."providerCallId" AS "callControlId"`,
    },
    limit,
    LEASE_SECONDS,
  );
}

/** The claimed wait has been walked: cleared, unless a later question's wait has replaced it meanwhile. */
async function releaseWait(services: AppServices, callId: string, step: number): Promise<void> {
  await poolSql(services.sql)(
    {
      name: 'telnyx_question_wait_release',
      text: `UPDATE "CallQuestionWait" SET "dueAt" = NULL WHERE "callId" = $1::uuid AND step = $2`,
    },
    callId,
    step,
  );
}

/**
 * Walks a claimed question with nothing heard: "(no answer)", then the next question or the closing. A call whose
 * connection is gone (removed) or that was never bound to a call_control_id cannot be commanded: its wait is cleared.
 * A failure (Telnyx or the database away) leaves the lease, so that a later pass walks it again.
 */
async function walkUnanswered(services: AppServices, wait: ClaimedWait): Promise<void> {
  const connection = wait.connectionId ? await openTelnyxConnection(services, wait.connectionId) : null;
  if (connection && wait.callControlId) {
    let call;
    try {
      call = await scriptCallOf(services, wait.attemptId, connection.id);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
    }
    if (call)
      await walkTelnyxStep(services, connection, call, wait.attemptId, wait.callControlId, {
        kind: 'step',
        step: wait.step,
        heard: null,
      });
  }
  await releaseWait(services, wait.callId, wait.step);
}

export interface QuestionWaitSweep {
  /** One pass: claims the waits past due and walks each unanswered one. Answers how many were claimed. */
  sweepOnce(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

/**
 * The sweep every API process runs (api/main.ts), every `intervalMs` (default 500: a question's timeout is kept to
 * within half a second). Processes share the work through claimDueWaits; none holds a timer of its own.
 */
export function createQuestionWaitSweep(
  services: AppServices,
  { intervalMs = 500 }: { intervalMs?: number } = {},
): QuestionWaitSweep {
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> = Promise.resolve();
  let stopped = false;

  async function sweepOnce(): Promise<number> {
    const claimed = await claimDueWaits(services, SWEEP_BATCH);
    await Promise.all(
      claimed
        .filter((wait) => wait.unanswered)
        .map((wait) =>
          walkUnanswered(services, wait).catch((error: unknown) =>
            log.warn(
              { err: error, callId: wait.callId, step: wait.step },
              'unanswered question not walked, left to a later pass',
            ),
          ),
        ),
    );
    return claimed.length;
  }

  function schedule(delayMs: number) {
    if (stopped) return;
    timer = setTimeout(() => {
      sweeping = sweepOnce()
        .then((count) => schedule(count === SWEEP_BATCH ? 0 : intervalMs))
        // PostgreSQL away: the waits stay, and the next pass tries again.
        .catch(() => schedule(intervalMs));
    }, delayMs);
    timer.unref();
  }

  return {
    sweepOnce,
    start: () => schedule(0),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await sweeping.catch(() => undefined);
    },
  };
}
