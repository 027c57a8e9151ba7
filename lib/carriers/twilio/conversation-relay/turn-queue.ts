/**
 * The turns of one conversation socket (a call's relay socket, a web test session's), one at a time, with a bounded
 * wait list (docs/features/conversation/relay.md#one-turn-at-a-time). Before issue 40 each frame chained a promise
 * onto the last, so a client sending while a turn ran grew the chain (and the model requests behind it) without bound.
 *
 * Here at most one turn runs; what arrives meanwhile waits under its kind, at most one of each kind: a new item of a
 * kind already waiting is merged into it (`merge`) and moves to the end, so the list never holds more entries than
 * there are kinds. For speech that is ConversationRelay's own reading: words the lead says while the agent's reply
 * runs are one utterance after it (Twilio's interrupt, then the prompt), not a queue of replies to come.
 */
export interface QueuedTurn<K extends string> {
  kind: K;
  run(): Promise<void>;
}

export interface TurnQueue<K extends string, T extends QueuedTurn<K>> {
  /** Runs the turn now if none runs, else keeps it (merged with the waiting turn of its kind, if any). */
  push(turn: T): void;
  /** Turns waiting (not the running one): at most one per kind. */
  readonly waiting: number;
  /** Whether a turn runs now. */
  readonly busy: boolean;
  /** Resolves once nothing runs and nothing waits. */
  idle(): Promise<void>;
}

export function createTurnQueue<K extends string, T extends QueuedTurn<K>>(options: {
  /** The turn a waiting one and a newer one of the same kind become (default: the newer). */
  merge?: (waiting: T, newer: T) => T;
  /** A turn that threw (the queue goes on with the next). */
  failed: (error: unknown) => unknown;
}): TurnQueue<K, T> {
  const waiting: T[] = [];
  let busy = false;
  let idlers: Array<() => void> = [];

  const next = () => {
    const turn = waiting.shift();
    if (!turn) {
      busy = false;
      const resolved = idlers;
      idlers = [];
      for (const resolve of resolved) resolve();
      return;
    }
    busy = true;
    // Each turn's run() is awaited before the next starts: one promise at a time, never a chain.
    void turn
      .run()
      .catch((error: unknown) => void options.failed(error))
      .finally(next);
  };

  return {
    push(turn) {
      const at = waiting.findIndex((queued) => queued.kind === turn.kind);
      let item = turn;
      if (at >= 0) {
        const [older] = waiting.splice(at, 1);
        item = options.merge ? options.merge(older!, turn) : turn;
      }
      waiting.push(item);
      if (!busy) next();
    },
    get waiting() {
      return waiting.length;
    },
    get busy() {
      return busy;
    },
    idle() {
      return busy ? new Promise<void>((resolve) => idlers.push(resolve)) : Promise.resolve();
    },
  };
}

/** Two utterances said one after the other, as one: joined by a space and cut at `cap` characters. */
export const joinUtterances = (first: string, second: string, cap: number) => `${first} ${second}`.slice(0, cap);

/**
 * A per-socket frame budget (a token bucket): `burst` frames at once, refilled at `perSecond`. A frame without a token
 * is dropped unread; the socket's owner closes a socket that keeps sending past it.
 */
export function frameBudget(options: { burst: number; perSecond: number }, now: () => number = Date.now) {
  let tokens = options.burst;
  let at = now();
  return {
    /** Takes a token for one frame: false when there is none left. */
    take(): boolean {
      const time = now();
      tokens = Math.min(options.burst, tokens + ((time - at) / 1000) * options.perSecond);
      at = time;
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
  };
}

/**
 * The frame limits of the conversation sockets (docs/features/conversation/relay.md#one-turn-at-a-time): a carrier
 * sends a few frames per utterance (with partial prompts, a few per second); a client of a test session types.
 */
export const SOCKET_FRAME_LIMITS = {
  /** Frames at once before the rate applies. */
  burst: 40,
  /** Frames a second, sustained. */
  perSecond: 10,
  /** Frames dropped for the budget before the socket is closed (1008): a client that does not slow down. */
  droppedBeforeClose: 100,
} as const;
