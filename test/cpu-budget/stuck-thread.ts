// A CPU budget thread (lib/cpu-budget/serve.ts) whose every task spins until the pool terminates it, as a catastrophic
// regular expression over a tenant's text would, and whatever the rewrite of the regular expressions makes of it;
// `probe` answers at once, so that a test can tell a fresh thread took over.
import { serveTasks } from '../../lib/cpu-budget/serve';

const spin = (): never => {
  for (;;) {
    // Never yields: only terminate() ends it.
  }
};

serveTasks({ evaluateCall: spin, extractByRules: spin, redactTurns: spin, probe: () => 'fresh' });
