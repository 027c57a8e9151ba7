// The production workflows plus a no-op baseline, bundled for bench/journeys.ts only.
export * from '../workflows';

/** Does nothing: what one workflow costs the server and the worker with no logic at all. */
export async function benchNoopWorkflow(): Promise<void> {}
