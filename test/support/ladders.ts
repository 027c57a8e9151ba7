import { DEFAULT_DIAL_LADDER, type DialLadder } from '../../lib/dial-ladder/dial-ladder';
import type { CallingWindow } from '../../lib/dial-ladder/calling-window';

/** Every day, all day: no test waits for a window unless it sets one. */
export const ALWAYS_OPEN: CallingWindow = { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] };

export const SINGLE_ATTEMPT: DialLadder = { rungs: [{ delaySeconds: 0 }], outcomes: DEFAULT_DIAL_LADDER.outcomes };

/** The default ladder's rules on delays short enough for a test: now, +1 s, +1 s. */
export const QUICK_LADDER: DialLadder = {
  rungs: [{ delaySeconds: 0 }, { delaySeconds: 1 }, { delaySeconds: 1 }],
  outcomes: DEFAULT_DIAL_LADDER.outcomes,
};
