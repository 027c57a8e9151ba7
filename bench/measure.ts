const percentile = (sorted: number[], p: number) => Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!.toFixed(2));

/** Runs `count` operations with `concurrency` in flight; returns per-second rate and latencies. */
export async function measure(count: number, concurrency: number, operation: (index: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const index = next++;
      const begin = performance.now();
      await operation(index);
      latencies.push(performance.now() - begin);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { count, perSecond: Math.round(count / seconds), p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) };
}

/** Peak and current resident memory of a process, in MB (Linux /proc). */
export function memoryOf(pid: number, read: (file: string) => string): { peakRssMb: number; rssMb: number } {
  const status = read(`/proc/${pid}/status`);
  const mb = (field: string) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) / 1024);
  return { peakRssMb: mb('VmHWM'), rssMb: mb('VmRSS') };
}
