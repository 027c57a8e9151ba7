/** One load run's figures, as the load generators print them (bench/load-loop.ts). */
export interface LoadRun {
  requests: number;
  errors: number;
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
}

/** The middle value (the upper one of an even count). */
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Two variants measured in the same run: one warm-up run of each (JIT, pools), then `rounds` rounds that
 * alternate which goes first, so a drift of the machine weighs on both. Answers every run and the medians.
 */
export async function alternatingRounds<V extends string, R extends LoadRun>(
  variants: readonly [V, V],
  rounds: number,
  load: (variant: V) => Promise<R>,
  label: string,
) {
  for (const variant of variants) await load(variant);
  const runs = Object.fromEntries(variants.map((variant) => [variant, [] as R[]])) as Record<V, R[]>;
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 ? [variants[1], variants[0]] : variants) {
      runs[variant].push(await load(variant));
      console.error(`${label}, round ${round + 1}, ${variant}: ${JSON.stringify(runs[variant].at(-1))}`);
    }
  }
  const summary = (variant: V) => ({
    rps: median(runs[variant].map((run) => run.rps)),
    p50Ms: median(runs[variant].map((run) => run.p50Ms)),
    p99Ms: median(runs[variant].map((run) => run.p99Ms)),
    errors: runs[variant].reduce((total, run) => total + run.errors, 0),
  });
  return { runs, summary };
}

/**
 * A webhook against its bare route at each number of connections (alternatingRounds per level): the
 * medians of each, the webhook's share of the bare route's throughput and its extra p50, and every run.
 */
export async function webhookAgainstBare<R extends LoadRun>(
  concurrency: readonly number[],
  rounds: number,
  load: (variant: 'bare' | 'webhook', connections: number) => Promise<R>,
) {
  const levels = [];
  for (const connections of concurrency) {
    const { runs, summary } = await alternatingRounds(
      ['bare', 'webhook'] as const,
      rounds,
      (variant) => load(variant, connections),
      `${connections} conn`,
    );
    const bare = summary('bare');
    const webhook = summary('webhook');
    levels.push({
      connections,
      bare,
      webhook,
      webhookOverBareRps: Number((webhook.rps / bare.rps).toFixed(3)),
      webhookCostP50Ms: Number((webhook.p50Ms - bare.p50Ms).toFixed(3)),
      runs,
    });
  }
  return levels;
}
