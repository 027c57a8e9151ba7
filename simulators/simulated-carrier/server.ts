import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import express, { type Request, type Response } from 'express';
import { z } from 'zod';
import { simulatedConversation } from './conversation';
import {
  dialSchema,
  isTerminalCallState,
  signEvent,
  SIGNATURE_HEADER,
  type CallEvent,
  type CallSnapshot,
  type Dial,
} from './protocol';
import { createJsonHttp } from '../../lib/http/json-http';
import { closeHttp, listenHttp } from '../../lib/http/listen';
import { postUntilAnswered, sleep, type RetryBackoff } from '../../lib/http/post-until-answered';
import type { TwinSql } from '../twin-common/sql';
import { ensureSimulatedCarrierTables, simulatedCarrierStore, type SimulatedCarrierCall } from './call-store';
import { simulatedOutcomeFor, simulatedTimeline, type TimelineEvent } from './timeline';

/**
 * The `simulated` carrier: a carrier of its own, spoken to over HTTP like a real one. It accepts dials
 * (POST /calls), keeps its own durable record of each call (in a schema of its own, call-store.ts, so
 * lookup and event delivery go on after a restart), and POSTs each call's signed status events to the call's
 * statusCallbackUrl at the times its timeline says (timeline.ts, multiplied by the time scale),
 * retrying with exponential backoff until answered 2xx, as carriers do. No call leaves the machine.
 *
 * It is not a twin of any provider: it speaks the product's OWN carrier protocol (docs/features/calls.md), but as a
 * stranger, like the twins: it holds its own copy of that protocol (protocol.ts: the dial, the call, the events, the
 * states, the signature) and of how it reads the agent's script (agent-script.ts, for the transcript it makes up,
 * conversation.ts), and imports nothing of the product's rules (test/import-rules.test.ts), so a product misreading
 * its own protocol is caught here.
 */
export interface SimulatedCarrierOptions {
  /** How it reaches its own tables (call-store.ts): the process's own pool (main.ts), or a test's. */
  sql: TwinSql;
  /** Signs every event (HMAC-SHA256, protocol.ts); never logged. */
  signingSecret: string;
  /** 1: real time; 0.001: a 40 s call lasts 40 ms (SIMULATED_CARRIER_TIME_SCALE). */
  timeScale: number;
  /** Backoff of an event the receiver did not answer 2xx: first delay, doubling up to the most. */
  retry?: RetryBackoff;
  /** Test seam: an event this answers false for is never sent, as if the carrier lost it. */
  sendsEvent?: (event: CallEvent) => boolean;
}

export interface SimulatedCarrier {
  /** The most calls it held live (dialed, not yet at their terminal state) at once since it started. */
  readonly maxLiveCalls: number;
  readonly liveCalls: number;
  listen(port: number, host?: string): Promise<string>;
  /** Stops delivering and closes the server; what is left to deliver is delivered by the next start. */
  close(): Promise<void>;
}

/** A call's delivery loop: wake() after a hangup makes it read the call again and look at its new timeline. */
interface Delivery {
  wakeUp: AbortController;
  changed: boolean;
  wake: () => void;
  done: Promise<void>;
  /** When the step the loop last took (delivered, skipped or in flight) was due: a hangup never comes before it. */
  takenDueAt: number;
  /**
   * The hangup as the loop is to see it, set by the hangup route before it writes the row: the loop may look at its
   * timeline again before that write commits, and must not take a step the hangup cut meanwhile.
   */
  hangupAt: Date | null;
}

type CallRow = SimulatedCarrierCall;

/** Sockets kept open to receivers of events: as many events in flight at once. */
const EVENT_SOCKETS = 64;

export function createSimulatedCarrier(options: SimulatedCarrierOptions): SimulatedCarrier {
  const { sql, timeScale } = options;
  const store = simulatedCarrierStore(sql);
  const retry = options.retry ?? { firstMs: 500, maxMs: 30_000 };
  const stopping = new AbortController();
  const http = createJsonHttp({ sockets: EVENT_SOCKETS });
  /** One delivery loop per call with events left; a hangup wakes its loop to read the new timeline. */
  const deliveries = new Map<string, Delivery>();
  const live = new Set<string>();
  let maxLiveCalls = 0;
  /** TEST CONTROL (POST /control/outage), not a carrier feature: while on, every dial is refused 503. */
  let outage = false;

  const timelineOf = (row: CallRow, hangupAt = row.hangupAt): TimelineEvent[] =>
    simulatedTimeline(row.to, hangupAt ? (hangupAt.getTime() - row.createdAt.getTime()) / timeScale : null);
  const dueAt = (row: CallRow, step: TimelineEvent) => row.createdAt.getTime() + step.atMs * timeScale;
  const eventOf = (row: CallRow, step: TimelineEvent): CallEvent => ({
    eventId: `${row.providerCallId}:${step.status}`,
    providerCallId: row.providerCallId,
    attemptId: row.attemptId,
    status: step.status,
    answeredBy: step.answeredBy,
    durationMs: step.durationMs,
    reason: step.reason,
    occurredAt: new Date(dueAt(row, step)).toISOString(),
  });

  /** Whether the dial asked to be told of this step: a terminal one always, a progress one if subscribed (none named: all). */
  const subscribes = (row: CallRow, step: TimelineEvent) => {
    const subscribed = row.statusCallbackEvents;
    return isTerminalCallState(step.status) || !subscribed || subscribed.includes(step.status);
  };

  /** What the carrier knows of the call now: the latest state of its timeline that is due. */
  function snapshotOf(row: CallRow): CallSnapshot {
    const now = Date.now();
    const due = timelineOf(row).filter((step) => dueAt(row, step) <= now);
    const current = due.at(-1) ?? { status: 'queued' as const, answeredBy: null, durationMs: null };
    return {
      providerCallId: row.providerCallId,
      attemptId: row.attemptId,
      status: current.status,
      answeredBy: due.find((step) => step.answeredBy)?.answeredBy ?? null,
      durationMs: isTerminalCallState(current.status) ? (current.durationMs ?? 0) : null,
      reason: 'reason' in current ? current.reason : null,
    };
  }

  async function post(url: string, event: CallEvent): Promise<void> {
    const rawBody = JSON.stringify(event);
    await postUntilAnswered(http, url, {
      rawBody,
      headers: () => ({ [SIGNATURE_HEADER]: signEvent(options.signingSecret, rawBody) }),
      retry,
      signal: stopping.signal,
    });
  }

  /**
   * Delivers the call's events in order from the row as dialed (read again only after a hangup changed
   * it); its own database unreachable, it waits and tries again. Delivery is at least once, as with real
   * carriers: only a call's last delivery is recorded (eventsDelivered), so after a restart a call still
   * in progress sends its earlier events again, which the receiver recognises by their event ids.
   */
  async function deliver(initial: CallRow, delivery: Delivery) {
    let row = initial;
    let next = initial.eventsDelivered;
    for (let delay = retry.firstMs; !stopping.signal.aborted;) {
      try {
        if (delivery.changed) {
          delivery.changed = false;
          const reread = await store.byProviderCallId(row.providerCallId);
          if (!reread) return;
          row = reread;
        }
        const timeline = timelineOf(row, delivery.hangupAt ?? row.hangupAt);
        const step = timeline[next];
        if (!step || !row.statusCallbackUrl) return;
        const wait = dueAt(row, step) - Date.now();
        if (wait > 0) {
          await sleep(wait, AbortSignal.any([stopping.signal, delivery.wakeUp.signal]));
          continue; // a hangup may have changed what comes next
        }
        const event = eventOf(row, step);
        delivery.takenDueAt = dueAt(row, step);
        if (isTerminalCallState(step.status)) live.delete(row.providerCallId);
        if (subscribes(row, step) && (options.sendsEvent?.(event) ?? true)) await post(row.statusCallbackUrl, event);
        if (stopping.signal.aborted) return;
        if (next + 1 === timeline.length) await store.setEventsDelivered(row.providerCallId, next + 1);
        next += 1;
        delay = retry.firstMs;
      } catch {
        await sleep(delay, stopping.signal);
        delay = Math.min(delay * 2, retry.maxMs);
      }
    }
  }

  const recordDial = (dial: Dial): Promise<CallRow> =>
    store.recordDial({
      attemptId: dial.attemptId,
      providerCallId: `sim_${createHash('sha256').update(dial.attemptId).digest('hex').slice(0, 24)}`,
      to: dial.to,
      fromNumber: dial.from ?? null,
      outcome: simulatedOutcomeFor(dial.to),
      durationMs: simulatedTimeline(dial.to).at(-1)!.durationMs ?? 0,
      statusCallbackUrl: dial.statusCallbackUrl,
      agent: dial.agent,
      lead: dial.lead,
      statusCallbackEvents: dial.statusCallbackEvents,
    });

  function startDelivery(row: CallRow) {
    if (deliveries.has(row.providerCallId) || stopping.signal.aborted) return;
    if (dueAt(row, timelineOf(row).at(-1)!) > Date.now()) {
      live.add(row.providerCallId);
      maxLiveCalls = Math.max(maxLiveCalls, live.size);
    }
    const delivery: Delivery = {
      wakeUp: new AbortController(),
      changed: false,
      wake: () => {
        delivery.changed = true;
        delivery.wakeUp.abort();
        delivery.wakeUp = new AbortController();
      },
      done: Promise.resolve(),
      takenDueAt: row.createdAt.getTime(),
      hangupAt: row.hangupAt,
    };
    delivery.done = deliver(row, delivery)
      .catch((error: unknown) => console.error(`simulated carrier: delivery of ${row.providerCallId} stopped`, error))
      .finally(() => deliveries.delete(row.providerCallId));
    deliveries.set(row.providerCallId, delivery);
  }

  async function resumeDeliveries() {
    for (const row of await store.owingEvents()) if (row.eventsDelivered < timelineOf(row).length) startDelivery(row);
  }

  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb' }));
  const found = async (req: Request, res: Response): Promise<CallRow | null> => {
    const row = await store.byProviderCallId(String(req.params.id));
    if (!row) res.status(404).json({ error: 'call_not_found' });
    return row;
  };
  const route =
    (handler: (req: Request, res: Response) => Promise<void>) =>
    (req: Request, res: Response, next: (error: unknown) => void) => {
      handler(req, res).catch(next);
    };

  app.post('/control/outage', (req, res) => {
    const parsed = z.object({ on: z.boolean() }).safeParse(req.body);
    if (!parsed.success) {
      res.status(400).json({ error: 'invalid_body', issues: parsed.error.issues });
      return;
    }
    outage = parsed.data.on;
    res.json({ on: outage });
  });
  app.post(
    '/calls',
    route(async (req, res) => {
      if (outage) {
        res.status(503).json({ error: 'simulated_outage' });
        return;
      }
      const parsed = dialSchema.safeParse(req.body);
      if (!parsed.success) {
        res.status(400).json({ error: 'invalid_body', issues: parsed.error.issues });
        return;
      }
      const dial = parsed.data;
      const row = await recordDial(dial);
      startDelivery(row);
      res.status(201).json(snapshotOf(row));
    }),
  );
  app.get(
    '/calls',
    route(async (req, res) => {
      const row = await store.byAttemptId(typeof req.query.attemptId === 'string' ? req.query.attemptId : '');
      if (row) res.json(snapshotOf(row));
      else res.status(404).json({ error: 'call_not_found' });
    }),
  );
  app.get(
    '/calls/:id',
    route(async (req, res) => {
      const row = await found(req, res);
      if (row) res.json(snapshotOf(row));
    }),
  );
  app.post(
    '/calls/:id/hangup',
    route(async (req, res) => {
      const row = await found(req, res);
      if (!row) return;
      if (!isTerminalCallState(snapshotOf(row).status)) {
        // The call ends now, or just after the last step its loop took (a step taken late, as the loop was busy,
        // happened first); the loop learns it at once, before the row is written, so that it takes no step the
        // hangup cuts and its events stay those of one timeline: a canceled event always comes.
        const delivery = deliveries.get(row.providerCallId);
        const hangupAt =
          row.hangupAt ?? delivery?.hangupAt ?? new Date(Math.max(Date.now(), (delivery?.takenDueAt ?? 0) + 1));
        if (delivery && !delivery.hangupAt) {
          delivery.hangupAt = hangupAt;
          delivery.wake();
        }
        res.json(snapshotOf((await store.hangUp(row.providerCallId, hangupAt)) ?? row));
        return;
      }
      res.json(snapshotOf(row));
    }),
  );
  app.get(
    '/calls/:id/transcript',
    route(async (req, res) => {
      const row = await found(req, res);
      if (!row) return;
      const call = snapshotOf(row);
      if (!isTerminalCallState(call.status) || !call.answeredBy) {
        res.status(404).json({ error: 'no_transcript' });
        return;
      }
      const transcript = simulatedConversation({
        agent: (row.agent ?? null) as Parameters<typeof simulatedConversation>[0]['agent'],
        lead: (row.lead ?? { name: null, fields: {} }) as Parameters<typeof simulatedConversation>[0]['lead'],
        answeredBy: call.answeredBy,
        durationMs: call.durationMs ?? 0,
        seed: row.providerCallId,
      });
      res.json({ transcript });
    }),
  );

  let server: Server | undefined;
  return {
    get maxLiveCalls() {
      return maxLiveCalls;
    },
    get liveCalls() {
      return live.size;
    },
    async listen(port, host = '127.0.0.1') {
      await ensureSimulatedCarrierTables(sql);
      const listening = await listenHttp(app, port, host);
      server = listening.server;
      await resumeDeliveries();
      return listening.url;
    },
    async close() {
      stopping.abort();
      await Promise.all([...deliveries.values()].map((delivery) => delivery.done));
      await closeHttp(server);
      http.close();
    },
  };
}
