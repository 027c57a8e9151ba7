/**
 * The load generators' loop (bench/load.ts, bench/load-signed-events.ts, bench/load-whatsapp-statuses.ts):
 * `connections` requests in flight for `durationMs`, each latency kept; a status other than 200 counts as
 * an error. `once` is told which connection (0 to connections - 1) sends, for loads that keep an order per
 * connection.
 */
export async function runLoad(once: (connection: number) => Promise<number>, connections: number, durationMs: number) {
  const latenciesUs: number[] = [];
  let errors = 0;
  const deadline = performance.now() + durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_, connection) => {
      while (performance.now() < deadline) {
        const begin = process.hrtime.bigint();
        const status = await once(connection);
        latenciesUs.push(Number(process.hrtime.bigint() - begin) / 1000);
        if (status !== 200) errors++;
      }
    }),
  );
  const elapsedS = (performance.now() - started) / 1000;
  latenciesUs.sort((a, b) => a - b);
  const percentile = (p: number) =>
    Number((latenciesUs[Math.min(latenciesUs.length - 1, Math.floor(latenciesUs.length * p))]! / 1000).toFixed(3));
  return {
    requests: latenciesUs.length,
    errors,
    rps: Math.round(latenciesUs.length / elapsedS),
    p50Ms: percentile(0.5),
    p90Ms: percentile(0.9),
    p99Ms: percentile(0.99),
  };
}
