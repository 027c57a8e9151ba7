import type { Client } from '@temporalio/client';
import { LEAD_WORKFLOW_KIND_SQL } from '../campaigns/lead-workflow-kind';
import { startLeadWorkflow, type StoredLead } from './start-lead-workflow';
import type { SqlPool } from '../sql-pool';
import { createStartQueue } from './start-queue';
import { handOutFreeLines, type GrantedLine } from '../calls/call-lines';
import { NOW_UTC } from '../sql-clock';
import { handOverLines } from './line-queue';
import { poolSql } from '../run-sql';

export interface LeadDispatcherOptions {
  sql: SqlPool;
  temporal: Client;
  taskQueue: string;
  /** A lead stored this long ago without a workflow is taken over by the sweep (its request's own start failed or its process died). */
  staleAfterMs?: number;
  sweepIntervalMs?: number;
  /** Leads waiting for their immediate start beyond this are left to the sweep, so that a burst cannot pile up in memory. */
  maxImmediateQueued?: number;
  /** Immediate starts sent to Temporal at once. More only queue inside the server and its client. */
  startConcurrency?: number;
}

export interface LeadDispatcher {
  /** Starts the leads' workflows now, off the request's path; whatever fails here is left to the sweep. */
  dispatchSoon(leads: readonly StoredLead[]): void;
  /** One pass of the sweep; returns how many workflows it started (or found started). */
  sweepOnce(): Promise<number>;
  /**
   * One pass of the line sweep: lines handed to queued leads and still unused REWAKE_AFTER_S after their last
   * wake-up are woken again (a wake-up lost with the process that sent it); a line whose workflow is gone is handed
   * on. Returns how many it woke.
   */
  rewakeOnce(): Promise<number>;
  startSweeping(): void;
  stop(): Promise<void>;
}

const SWEEP_BATCH = 200;

/**
 * A stored lead whose workflow is this outbox's to start (over "Lead" l): not started, not settled without a
 * workflow, and not waiting in a line queue. A lead queued by its push ("waitingFor" line or campaign, never started)
 * gets its workflow when a line is handed to it (lib/temporal/line-queue.ts), so the sweep's cost follows the leads to
 * start, not the leads waiting; one whose campaign was stopped before it had a line is settled by the stop without
 * ever having one ("settledWithoutWorkflowAt"). Written exactly as the predicate of the partial index
 * "Lead_undispatched_idx" that answers it (prisma/migrations/*_lead_settled_without_workflow).
 */
export const UNDISPATCHED_LEAD_SQL = `l."workflowStartedAt" IS NULL AND l."settledWithoutWorkflowAt" IS NULL AND l."waitingFor" IS DISTINCT FROM 'line' AND l."waitingFor" IS DISTINCT FROM 'campaign'`;
/** How long the first started lead's mark waits for others to join its UPDATE (markStarted). */
const MARK_COALESCE_MS = 25;
/** A line handed out and unused this long after its wake-up is woken again: a woken lead dials within a second. */
const REWAKE_AFTER_S = 30;
/** How often the sweep looks for free lines nobody handed out (handOutForgottenLines). */
const FORGOTTEN_LINES_EVERY_MS = 10_000;

/**
 * The transactional outbox of lead intake. A push commits its lead rows and answers; the workflows are
 * started from those rows, first right after the answer and then, for any row still without its
 * workflow, by a sweep that every API process runs (rows are claimed with SKIP LOCKED, so processes
 * never start the same lead at once). Starting twice is harmless: the workflow id is derived from the
 * campaign and the idempotency key, and Temporal refuses a second run of it.
 */
export function createLeadDispatcher(options: LeadDispatcherOptions): LeadDispatcher {
  const { sql, temporal, taskQueue } = options;
  const staleAfterMs = options.staleAfterMs ?? 10_000;
  const sweepIntervalMs = options.sweepIntervalMs ?? 1_000;
  const maxImmediateQueued = options.maxImmediateQueued ?? 5_000;
  const startConcurrency = options.startConcurrency ?? 32;
  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> = Promise.resolve();
  let stopped = false;

  async function startAll(leads: readonly StoredLead[]): Promise<string[]> {
    const started = await Promise.all(leads.map((lead) => startLeadWorkflow(temporal, taskQueue, lead)));
    return leads.filter((_, index) => started[index]).map((lead) => lead.id);
  }

  // Leads started right after their answer are marked in one UPDATE per flush, not one per request.
  let startedToMark: string[] = [];
  // Started here and not yet marked: the sweep leaves them alone too. Without this, a lead whose start had
  // waited past staleAfterMs was started a second time by the sweep between its start and its mark (Temporal
  // refuses it, after doing most of a start's work), and the sweep's row locks held the marks back meanwhile:
  // under load it fed on itself (bench/intake.ts (a), docs/benchmarks/intake.md).
  const unmarked = new Set<string>();
  let flushing: Promise<void> | null = null;
  const flushStarted = async () => {
    while (startedToMark.length) {
      const ids = startedToMark;
      startedToMark = [];
      try {
        await sql.query({
          name: 'mark_leads_started',
          text: 'UPDATE "Lead" SET "workflowStartedAt" = now() WHERE id = ANY($1::uuid[]) AND "workflowStartedAt" IS NULL',
          values: [ids],
        });
      } finally {
        // Marked, or the mark failed and the sweep is to take them over.
        for (const id of ids) unmarked.delete(id);
      }
    }
  };

  const markStarted = (leadIds: readonly string[]) => {
    for (const id of leadIds) unmarked.add(id);
    startedToMark.push(...leadIds);
    // One flush at a time, MARK_COALESCE_MS after the first start it marks: the starts of a pushed batch finish a few
    // at a time, and flushing at the first had cost one UPDATE per 2 or 3 leads (bench/bare-ladder.ts counted 132
    // for 350 leads); starts finishing meanwhile join it or the next one. A lost mark only means the sweep starts
    // that lead once more, which Temporal refuses as a duplicate; until its mark, `unmarked` keeps this process's
    // sweep off it, and other processes' sweeps wait staleAfterMs.
    flushing ??= new Promise((resolve) => setTimeout(resolve, MARK_COALESCE_MS))
      .then(flushStarted)
      .catch(() => undefined)
      .finally(() => {
        flushing = null;
        if (startedToMark.length) markStarted([]);
      });
  };

  // Leads answered by this process and not yet started: the sweep leaves them alone, so that a backlog
  // of starts is not sent to Temporal twice (which would only deepen it).
  const immediate = createStartQueue({ concurrency: startConcurrency, maxQueued: maxImmediateQueued });

  async function sweepOnce(): Promise<number> {
    const client = await sql.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<StoredLead>({
        name: 'claim_undispatched_leads',
        text: `SELECT l.id, l."workflowId", l."campaignId", l."workspaceId", ${LEAD_WORKFLOW_KIND_SQL} AS kind
                 FROM "Lead" l JOIN "Campaign" c ON c.id = l."campaignId"
                WHERE ${UNDISPATCHED_LEAD_SQL} AND l."createdAt" < now() - make_interval(secs => $1)
                  -- A line just handed to a lead queued by its push: its wake-up is starting it (its workflow marks
                  -- it started as it takes the line), and the line sweep sends that wake-up again if it was lost.
                  AND l."updatedAt" < ${NOW_UTC} - make_interval(secs => $1)
                ORDER BY l."createdAt" LIMIT $2 FOR UPDATE OF l SKIP LOCKED`,
        values: [staleAfterMs / 1000, SWEEP_BATCH],
      });
      const started = await startAll(rows.filter((lead) => !immediate.isWaiting(lead.id) && !unmarked.has(lead.id)));
      if (started.length)
        await client.query('UPDATE "Lead" SET "workflowStartedAt" = now() WHERE id = ANY($1::uuid[])', [started]);
      await client.query('COMMIT');
      return started.length;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async function rewakeOnce(): Promise<number> {
    const { rows } = await sql.query<GrantedLine>({
      name: 'rewake_unused_lines',
      text: `UPDATE "LineQueue" q SET "wokenAt" = ${NOW_UTC}
               FROM (SELECT seq FROM "LineQueue"
                      WHERE "grantedAt" IS NOT NULL AND "wokenAt" < ${NOW_UTC} - make_interval(secs => $1)
                      ORDER BY "wokenAt" LIMIT $2 FOR UPDATE SKIP LOCKED) due, "Lead" l
              WHERE q.seq = due.seq AND l.id = q."leadId"
             RETURNING q."leadId"::text AS "leadId", q."campaignId"::text AS "campaignId", q."attemptId",
                       q."workflowId", q."byPush", l."workspaceId"::text AS "workspaceId"`,
      values: [REWAKE_AFTER_S, SWEEP_BATCH],
    });
    await handOverLines(poolSql(sql), temporal, rows, taskQueue);
    return rows.length + (await handOutForgottenLines());
  }

  /**
   * Free lines nobody handed out: a push stores its leads in the queue, then hands the campaign's free lines out; an
   * API that died in between (or a hand-out that failed) leaves an idle campaign with free lines and a queue, which no
   * call's end will ever serve. Looked for every FORGOTTEN_LINES_EVERY_MS, over running campaigns with a free line
   * whose first waiting entry is older than REWAKE_AFTER_S (a push's own hand-out comes first).
   */
  let forgottenCheckedAt = 0;
  async function handOutForgottenLines(): Promise<number> {
    if (Date.now() - forgottenCheckedAt < FORGOTTEN_LINES_EVERY_MS) return 0;
    forgottenCheckedAt = Date.now();
    const { rows } = await sql.query<{ id: string }>({
      name: 'campaigns_with_forgotten_lines',
      text: `SELECT c.id::text FROM "Campaign" c
              WHERE c.status = 'RUNNING' AND c."callsInFlight" < c."maxConcurrentCalls"
                AND EXISTS (SELECT 1 FROM "LineQueue" q WHERE q."campaignId" = c.id AND q."grantedAt" IS NULL
                               AND q."queuedAt" < ${NOW_UTC} - make_interval(secs => $1))`,
      values: [REWAKE_AFTER_S],
    });
    let granted = 0;
    for (const { id } of rows) {
      const lines = await handOutFreeLines(poolSql(sql), id);
      granted += lines.length;
      await handOverLines(poolSql(sql), temporal, lines, taskQueue);
    }
    return granted;
  }

  function scheduleSweep(delayMs: number) {
    if (stopped) return;
    sweepTimer = setTimeout(() => {
      sweeping = rewakeOnce()
        .catch(() => 0)
        .then(sweepOnce)
        .then((count) => scheduleSweep(count === SWEEP_BATCH ? 0 : sweepIntervalMs))
        // PostgreSQL or Temporal away: the rows stay, and the next sweep tries again.
        .catch(() => scheduleSweep(sweepIntervalMs));
    }, delayMs);
    sweepTimer.unref();
  }

  return {
    dispatchSoon(leads) {
      for (const lead of leads) {
        // Already waiting (pushed again before its start was sent): it keeps its place.
        if (immediate.isWaiting(lead.id)) continue;
        const queued = immediate.offer(lead.id, async () => {
          if (await startLeadWorkflow(temporal, taskQueue, lead)) markStarted([lead.id]);
        });
        if (!queued) break;
      }
    },
    sweepOnce,
    rewakeOnce,
    startSweeping() {
      scheduleSweep(0);
    },
    async stop() {
      stopped = true;
      clearTimeout(sweepTimer);
      await Promise.allSettled([sweeping, immediate.stop()]);
      await flushing;
    },
  };
}
