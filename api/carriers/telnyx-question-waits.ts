import { log } from '../../lib/log';
import { Refusal } from '../../lib/refusal';
import { poolSql } from '../../lib/run-sql';
import type { AppServices } from '../app-services';
import { scriptCallOf } from './script-calls';
import {
  armQuestionWaitRow,
  claimDueQuestionWaits,
  releaseQuestionWait,
  type Claim,
  type ClaimedWait,
} from './carrier-call-store';
import { answerTimeoutMsOf, openTelnyxConnection, walkTelnyxStep } from './telnyx-walk';

/**
 * A question nobody answers on Telnyx (docs/features/carriers/telnyx.md#a-question-nobody-answers-on-telnyx). Twilio's Gather
 * times out by itself and posts its action with nothing heard; Call Control's transcription has no timeout and Telnyx
 * no timer, so the product keeps one, in the database: a question's `call.speak.ended` arms its wait ("CallQuestionWait",
 * due ANSWER_TIMEOUT_SECONDS later), and a sweep that every API process runs claims the waits past due whose question
 * has no answer stored, with one UPDATE ... RETURNING (rows locked SKIP LOCKED: two processes never claim the same),
 * and walks the question's step with nothing heard: "(no answer)", then the next question or the closing, exactly as a
 * transcript would have. A claim is a lease, not a removal: a process that dies after claiming leaves the wait due
 * again LEASE_SECONDS later, and the step it walks again is stored and said once (turns keyed by call, step and part;
 * speaks by command_id). A transcript that comes after the walk went on finds its question's answer stored and changes
 * nothing; one that comes first leaves the wait to lapse unwalked.
 *
 * The sweep costs nothing while no question waits: the claim also reads when the next wait falls due, and the sweep
 * sleeps until then; a wait this process arms wakes it at once (to sleep until that wait's due time); and it looks
 * again at most IDLE_POLL_MS later, for the waits other processes armed (a process that dies leaves its waits to the
 * others' next look, or to its own next start, which sweeps at once).
 */

/** How long a claimed wait is left to its process before another may walk it again. */
const LEASE_SECONDS = 30;
/** Waits claimed per pass; a full batch sweeps again at once. */
const SWEEP_BATCH = 100;
/**
 * The longest a sweep sleeps: how late a wait armed by another process may be walked when that process has died before
 * its due time (a wait this process arms wakes its own sweep).
 */
const IDLE_POLL_MS = 5_000;
/** A pass that failed (PostgreSQL away) is tried again this much later, or at the idle poll if sooner. */
const RETRY_MS = 1_000;

/** The sweeps running on each process's services, woken by the waits armed there (armQuestionWait). */
const sweepsOf = new WeakMap<AppServices, Set<(inMs: number) => void>>();

/**
 * Question `step` of the call has been said: its answer is awaited until the timeout from now. Only forward: a wait
 * for a later question is not put back by an earlier one's late webhook, and nothing is armed once the question's
 * answer is stored (the transcript came first, or the timeout already walked on). The same question's speak ending
 * again (a copy of the webhook, or the end of a line said before it that carries its client_state) moves the due time
 * later, never earlier, while it is still awaited. Answers whether a wait was armed or moved.
 */
export async function armQuestionWait(services: AppServices, callId: string, step: number): Promise<boolean> {
  const timeoutMs = answerTimeoutMsOf(services);
  const armed = await armQuestionWaitRow(poolSql(services.sql), callId, step, timeoutMs / 1_000);
  // Armed or moved: due the timeout from now (a moved wait is due no earlier). This process's sweep wakes then.
  if (armed) for (const wake of sweepsOf.get(services) ?? []) wake(timeoutMs);
  return armed;
}

/** Claims the waits past due, at most `limit`, each leased LEASE_SECONDS (claimDueQuestionWaits). */
async function claimDueWaits(services: AppServices, limit: number): Promise<Claim> {
  return claimDueQuestionWaits(poolSql(services.sql), limit, LEASE_SECONDS);
}

/** The claimed wait has been walked: cleared, unless a later question's wait has replaced it meanwhile. */
async function releaseWait(services: AppServices, callId: string, step: number): Promise<void> {
  await releaseQuestionWait(poolSql(services.sql), callId, step);
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
  /** How many claims (the sweep's one query per pass) it has run: none while it sleeps. */
  readonly claims: number;
}

/**
 * The sweep every API process runs (api/main.ts). It sleeps until the earliest wait falls due (read with each claim),
 * is woken by the waits this process arms, and looks again at most every `idlePollMs` (default IDLE_POLL_MS) for the
 * waits armed by other processes: idle, one query per idle poll. Processes share the work through claimDueWaits; a
 * wait's time is kept in the database, so any process may walk it.
 */
export function createQuestionWaitSweep(
  services: AppServices,
  { idlePollMs = IDLE_POLL_MS }: { idlePollMs?: number } = {},
): QuestionWaitSweep {
  let timer: NodeJS.Timeout | undefined;
  /** When the timer fires (performance.now()); Infinity: no timer. */
  let timerAt = Infinity;
  let sweeping: Promise<unknown> | null = null;
  /** The earliest wake asked for while a pass ran: it is kept when the pass sets the next timer. */
  let wakeAt = Infinity;
  let stopped = false;
  let claims = 0;

  /** Claims the waits past due and walks each unanswered one. */
  async function sweep(): Promise<{ claimed: number; nextDueInMs: number | null }> {
    claims++;
    const { waits, nextDueInMs } = await claimDueWaits(services, SWEEP_BATCH);
    await Promise.all(
      waits
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
    return { claimed: waits.length, nextDueInMs };
  }

  /** One pass; answers in how long the next one is due: at once after a full batch, else at the next due wait. */
  async function pass(): Promise<number> {
    const { claimed, nextDueInMs } = await sweep();
    if (claimed === SWEEP_BATCH) return 0;
    return Math.min(idlePollMs, nextDueInMs ?? Infinity);
  }

  /** Sweeps at `at` (performance.now()) unless a pass is already due sooner. */
  function sweepAt(at: number) {
    if (stopped) return;
    if (sweeping) {
      wakeAt = Math.min(wakeAt, at);
      return;
    }
    if (at >= timerAt) return;
    clearTimeout(timer);
    timerAt = at;
    timer = setTimeout(run, Math.max(0, Math.ceil(at - performance.now())));
    timer.unref();
  }

  function run() {
    timer = undefined;
    timerAt = Infinity;
    sweeping = pass()
      // PostgreSQL away: the waits stay, and a later pass tries again.
      .catch(() => Math.min(idlePollMs, RETRY_MS))
      .then((nextInMs) => {
        sweeping = null;
        const at = Math.min(performance.now() + nextInMs, wakeAt);
        wakeAt = Infinity;
        sweepAt(at);
      });
  }

  const wake = (inMs: number) => sweepAt(performance.now() + inMs);

  return {
    sweepOnce: async () => (await sweep()).claimed,
    start() {
      let sweeps = sweepsOf.get(services);
      if (!sweeps) sweepsOf.set(services, (sweeps = new Set()));
      sweeps.add(wake);
      sweepAt(performance.now());
    },
    async stop() {
      stopped = true;
      sweepsOf.get(services)?.delete(wake);
      clearTimeout(timer);
      await sweeping?.catch(() => undefined);
    },
    get claims() {
      return claims;
    },
  };
}
