// The end of `npm test` (scripts/test.sh, docs/operations-stopping.md): nothing a test run started may still be
// alive. The run exports WORKSPACE_TEST_RUN=<id>; every process it starts inherits it (test/support/processes.ts
// adds it where a test gives a process an environment of its own), the PostgreSQL and Temporal servers of
// vitest's global setup included. This lists the live processes whose environment (/proc/<pid>/environ) carries
// the marker, leaving out itself, its ancestors and its own children (tsx's esbuild), waits up to --wait-ms for them to go, then fails naming each.
//
//   node --import tsx scripts/leftover-processes.ts [--run <id>] [--after <stage>] [--wait-ms <ms>] [--kill]
//
// --run: the run's id (default: $WORKSPACE_TEST_RUN). --after: the stage just finished, for the messages.
// --wait-ms: how long processes that are stopping are given (default 10000). --kill: SIGKILL what is named.
// Exits 0 when none is left, 1 naming them, 2 on a usage error.
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

export const TEST_RUN_MARKER = 'WORKSPACE_TEST_RUN';

interface MarkedProcess {
  pid: number;
  ppid: number;
  command: string;
  taskQueue: string | undefined;
}

function read(path: string): string | null {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return null; // gone, or not ours to read
  }
}

/** pid, parent and state from /proc/<pid>/stat (the command name, in parentheses, may hold spaces). */
function statOf(pid: number): { ppid: number; state: string } | null {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === null) return null;
  const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: state!, ppid: Number(ppid) };
}

function ancestorsOfThisProcess(): Set<number> {
  const pids = new Set<number>();
  for (let pid = process.pid; pid > 0 && !pids.has(pid); pid = statOf(pid)?.ppid ?? 0) pids.add(pid);
  return pids;
}

/** Whether pid is a descendant of this process (tsx's esbuild service, started by this check). */
function startedByThisProcess(pid: number): boolean {
  const seen = new Set<number>();
  for (let parent = statOf(pid)?.ppid ?? 0; parent > 1 && !seen.has(parent); parent = statOf(parent)?.ppid ?? 0) {
    if (parent === process.pid) return true;
    seen.add(parent);
  }
  return false;
}

function markedProcesses(run: string): MarkedProcess[] {
  const mark = `${TEST_RUN_MARKER}=${run}`;
  const excluded = ancestorsOfThisProcess();
  const found: MarkedProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || excluded.has(pid)) continue;
    const environ = read(`/proc/${pid}/environ`)?.split('\0');
    if (!environ?.includes(mark)) continue;
    const stat = statOf(pid);
    // A zombie has exited already: it holds nothing but its exit status.
    if (!stat || stat.state === 'Z' || startedByThisProcess(pid)) continue;
    const command = (read(`/proc/${pid}/cmdline`) ?? '').split('\0').filter(Boolean).join(' ');
    const taskQueue = environ.find((variable) => variable.startsWith('TEMPORAL_TASK_QUEUE='))?.split('=')[1];
    found.push({ pid, ppid: stat.ppid, command, taskQueue });
  }
  return found;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      run: { type: 'string', default: process.env[TEST_RUN_MARKER] },
      after: { type: 'string', default: 'the tests' },
      'wait-ms': { type: 'string', default: '10000' },
      kill: { type: 'boolean', default: false },
    },
  });
  const waitMs = Number(values['wait-ms']);
  if (!values.run || !Number.isInteger(waitMs) || waitMs < 0) {
    console.error(`leftover processes: give --run <id> (or set ${TEST_RUN_MARKER}) and --wait-ms <ms>`);
    return 2;
  }
  const deadline = Date.now() + waitMs;
  let left = markedProcesses(values.run);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    left = markedProcesses(values.run);
  }
  if (left.length === 0) {
    console.log(`leftover processes: none of test run ${values.run} is alive after ${values.after}`);
    return 0;
  }
  console.error(
    `leftover processes: ${left.length} process(es) of test run ${values.run} still alive ${waitMs} ms after ${values.after} ended:`,
  );
  for (const each of left) {
    const queue = each.taskQueue ? ` [TEMPORAL_TASK_QUEUE=${each.taskQueue}]` : '';
    console.error(`  pid ${each.pid} (parent ${each.ppid}): ${each.command}${queue}`);
  }
  if (values.kill) {
    for (const each of left) {
      try {
        process.kill(each.pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    console.error(`leftover processes: killed them (SIGKILL)`);
  }
  return 1;
}

process.exitCode = await main();
