// The bare ladder (bench/bare-ladder.ts): the least a one-call lead can cost Temporal in the production
// ladder's shape, bundled on its own. No database, no patches, no tracing, no search attributes.
// The bare ladder's one signal is its own: lib/temporal/messages.ts is the production contract, which this bundle
// must not carry.
// eslint-disable-next-line @typescript-eslint/no-restricted-imports
import { condition, defineSignal, proxyLocalActivities, setHandler } from '@temporalio/workflow';

/** The one activity, run by the side's worker (side.ts), which imports this file, not the other way round. */
export interface BareActivities {
  bareDial(input: { attemptId: string; to: string }): Promise<string>;
}

/** What the side's receiver signals when the carrier says the call ended. */
export const bareCallEnded = defineSignal<[{ status: string }]>('bareCallEnded');

// A local activity, as the production dial: its result is a marker in the history, no activity task.
const { bareDial } = proxyLocalActivities<BareActivities>({ startToCloseTimeout: '10 seconds' });

/** One dial over HTTP to the simulated carrier, then one timer-bounded wait for the call's end. */
export async function bareLeadWorkflow(input: { attemptId: string; to: string }): Promise<string> {
  let ended: string | undefined;
  // Before the dial: the carrier's end may come before the dial's answer is recorded.
  setHandler(bareCallEnded, ({ status }) => void (ended = status));
  await bareDial(input);
  return (await condition(() => ended !== undefined, '5 minutes')) ? ended! : 'no end within 5 minutes';
}
