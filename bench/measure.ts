import { readdirSync, readFileSync } from 'node:fs';

/** The p-quantile (0 to 1) of ascending values, to 2 decimals. */
export const percentile = (sorted: number[], p: number) =>
  Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!.toFixed(2));

/** µs per call of `operation`, over `count` calls after a warm-up of a tenth as many. */
export function microsecondsPer(count: number, operation: () => unknown): number {
  for (let index = 0; index < count / 10; index++) operation();
  const started = process.hrtime.bigint();
  for (let index = 0; index < count; index++) operation();
  return Number((Number(process.hrtime.bigint() - started) / 1000 / count).toFixed(2));
}

/** Runs `count` operations with `concurrency` in flight; returns per-second rate and latencies. */
export async function measure(count: number, concurrency: number, operation: (index: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const index = next++;
        const begin = performance.now();
        await operation(index);
        latencies.push(performance.now() - begin);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    count,
    perSecond: Math.round(count / seconds),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
  };
}

/** Peak and current resident memory of a process, in MB (Linux /proc). */
export function memoryOf(pid: number, read: (file: string) => string): { peakRssMb: number; rssMb: number } {
  const status = read(`/proc/${pid}/status`);
  const mb = (field: string) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) / 1024);
  return { peakRssMb: mb('VmHWM'), rssMb: mb('VmRSS') };
}

/** One process in a snapshot: its command name, its parent's pid, the CPU seconds it has used. */
export interface ProcessCpu {
  name: string;
  parent: number;
  seconds: number;
  /** CPU seconds of its children that have ended and been waited for (cutime + cstime). */
  exitedChildrenSeconds: number;
}

/** Whether pid is a descendant of ancestor in the snapshot (the servers a bench started, not other people's). */
export function descendsFrom(processes: Map<number, ProcessCpu>, pid: number, ancestor: number): boolean {
  for (let at = processes.get(pid)?.parent, steps = 0; at && steps < 64; at = processes.get(at)?.parent, steps++)
    if (at === ancestor) return true;
  return false;
}

/** CPU seconds (user + system) used so far by each process on this machine, by pid: cpuSecondsByProcess over /proc. */
export const cpuNow = () =>
  cpuSecondsByProcess(
    (dir) => readdirSync(dir),
    (file) => readFileSync(file, 'utf8'),
  );

/** CPU seconds (user + system) used so far by each process on the machine, by pid (Linux /proc). */
export function cpuSecondsByProcess(
  readDir: (dir: string) => string[],
  read: (file: string) => string,
): Map<number, ProcessCpu> {
  const ticksPerSecond = 100;
  const result = new Map<number, ProcessCpu>();
  for (const entry of readDir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = read(`/proc/${entry}/stat`);
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      result.set(Number(entry), {
        name,
        parent: Number(fields[1]),
        seconds: (Number(fields[11]) + Number(fields[12])) / ticksPerSecond,
        exitedChildrenSeconds: (Number(fields[13]) + Number(fields[14])) / ticksPerSecond,
      });
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return result;
}

/** CPU seconds each group of processes used between two snapshots; `groupOf` names a process's group. */
export function cpuSecondsBetween(
  before: Map<number, ProcessCpu>,
  after: Map<number, ProcessCpu>,
  groupOf: (pid: number, name: string) => string,
): Record<string, number> {
  const groups: Record<string, number> = {};
  for (const [pid, { name, seconds }] of after) {
    const used = seconds - (before.get(pid)?.seconds ?? 0);
    if (used <= 0) continue;
    const group = groupOf(pid, name);
    groups[group] = Number(((groups[group] ?? 0) + used).toFixed(2));
  }
  return groups;
}

/**
 * CPU seconds the live threads of a process have run, to the nanosecond (/proc/<pid>/task/<tid>/schedstat), where
 * /proc/<pid>/stat counts 10 ms ticks: for small figures (an idle process, a few turns). A thread that has ended
 * takes its time with it: for processes whose threads live as long as they do (a Node process's).
 */
export function liveThreadsCpuSeconds(pid: number): number {
  let nanoseconds = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      nanoseconds += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return nanoseconds / 1e9;
}
