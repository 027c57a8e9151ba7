// A CPU budget thread (lib/cpu-budget/serve.ts) whose every task spins until the pool terminates it, as a catastrophic
// regular expression over a tenant's text would, and whatever the rewrite of the regular expressions makes of it;
// `probe` answers at once, so that a test can tell a fresh thread took over; `priority` answers the thread's own nice
// value (on Linux getpriority of pid 0 is the calling thread's); `wait` sleeps its input in ms using no CPU.
import { getPriority } from 'node:os';
import { serveTasks } from '../../lib/cpu-budget/serve';

const spin = (): never => {
  for (;;) {
    // Never yields: only terminate() ends it.
  }
};

serveTasks({
  evaluateCall: spin,
  extractByRules: spin,
  redactTurns: spin,
  probe: () => 'fresh',
  priority: () => getPriority(),
  wait: (ms: number) => {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    return 'woke';
  },
});
