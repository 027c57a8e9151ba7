import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parse } from 'yaml';

/** One kind of failure Schemathesis found: where, by which check, and the status that failed it. */
export interface Failure {
  operation: string;
  check: string;
  type: string;
  title: string;
  status: number | null;
  /**
   * The operation whose answer failed the check, where the failure is named after an earlier one: a resource
   * created by a POST (the failure's operation) and then not found by its follow-up (ensure_resource_availability).
   */
  followUp: string | null;
  /** How many generated requests failed this way. */
  count: number;
  /** One of them, to replay (`st replay <caseId>` in .test-results/fuzz). */
  caseId: string;
}

/**
 * A failure accepted on purpose. `check` names the Schemathesis check; `status`, `operations` (labels
 * such as `GET /v1/results`), `followUps` (labels of the failure's follow-up) and `tag` (an OpenAPI tag of
 * the operation) narrow what it covers;
 * `reason` says, on one line, why it is not a defect.
 */
export interface BaselineEntry {
  check: string;
  status?: number;
  operations?: string[];
  followUps?: string[];
  tag?: string;
  reason: string;
}

const ENTRY_KEYS = new Set(['check', 'status', 'operations', 'followUps', 'tag', 'reason']);

export function readBaseline(path: string): { entries: BaselineEntry[]; problems: string[] } {
  if (!existsSync(path)) return { entries: [], problems: [`${path} is missing`] };
  const entries = (parse(readFileSync(path, 'utf8')) ?? []) as BaselineEntry[];
  if (!Array.isArray(entries)) return { entries: [], problems: [`${path}: expected a list of entries`] };
  const problems = entries.flatMap((entry, index) => {
    const name = `baseline entry ${index + 1} (${entry.check})`;
    return [
      ...(typeof entry.reason !== 'string' || !entry.reason.trim() || entry.reason.includes('\n')
        ? [`${name} has no one-line reason`]
        : []),
      ...(typeof entry.check !== 'string' ? [`${name} names no check`] : []),
      ...Object.keys(entry)
        .filter((key) => !ENTRY_KEYS.has(key))
        .map((key) => `${name} has an unknown key ${key}`),
    ];
  });
  return { entries, problems };
}

interface CheckResult {
  name: string;
  status: string;
  failure_info?: { failure: { type: string; operation: string; title: string; message: string } };
}

interface ScenarioRecorder {
  checks?: Record<string, CheckResult[]>;
  interactions?: Record<string, { response?: { status_code: number } }>;
}

/** The status that failed a check: the one its message names (a probe Schemathesis sent), else the case's answer. */
function failedStatus(message: string, answered: number | undefined): number | null {
  const named = /got `(\d{3})|returned (\d{3})/.exec(message);
  return named ? Number(named[1] ?? named[2]) : (answered ?? null);
}

/** The follow-up a failure's message names (Schemathesis: "Not available with: `GET /campaigns/{id}/sheet`"). */
function followUpOf(message: string): string | null {
  return /Not available with: `([^`]+)`/.exec(message)?.[1] ?? null;
}

/** Every distinct failure of a run, from Schemathesis's event stream (--report ndjson). */
export async function readFailures(ndjsonPath: string): Promise<Failure[]> {
  const failures = new Map<string, Failure>();
  const lines = createInterface({ input: createReadStream(ndjsonPath), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.startsWith('{"ScenarioFinished"')) continue;
    const recorder = (JSON.parse(line) as { ScenarioFinished: { recorder?: ScenarioRecorder } }).ScenarioFinished
      .recorder;
    for (const [caseId, checks] of Object.entries(recorder?.checks ?? {})) {
      for (const check of checks) {
        const failure = check.failure_info?.failure;
        if (check.status !== 'failure' || !failure) continue;
        const status = failedStatus(failure.message, recorder?.interactions?.[caseId]?.response?.status_code);
        const followUp = followUpOf(failure.message);
        const key = [failure.operation, followUp, check.name, failure.type, status].join('|');
        const known = failures.get(key);
        if (known) known.count += 1;
        else
          failures.set(key, {
            operation: failure.operation,
            check: check.name,
            type: failure.type,
            title: failure.title,
            status,
            followUp,
            count: 1,
            caseId,
          });
      }
    }
  }
  return [...failures.values()].sort(
    (a, b) => a.operation.localeCompare(b.operation) || a.check.localeCompare(b.check),
  );
}

/** The failure's operation, then its follow-up where it has one: "POST /campaigns then GET /campaigns/{id}/sheet". */
const labelOf = (failure: Failure) =>
  failure.followUp ? `${failure.operation} then ${failure.followUp}` : failure.operation;

export function matches(
  entry: BaselineEntry,
  failure: Failure,
  tagsOf: (operation: string) => readonly string[],
): boolean {
  return (
    entry.check === failure.check &&
    (entry.status === undefined || entry.status === failure.status) &&
    (entry.operations === undefined || entry.operations.includes(failure.operation)) &&
    (entry.followUps === undefined || (failure.followUp !== null && entry.followUps.includes(failure.followUp))) &&
    (entry.tag === undefined || tagsOf(failure.operation).includes(entry.tag))
  );
}

/** The parts of Schemathesis's JSON report (--report json) the summary reads. */
export interface RunReport {
  running_time: number;
  complete: boolean;
  stop_reason: string;
  test_cases: { generated: number };
  errors: Array<{ title: string; count: number }>;
}

/** The failure kinds the goal counts, by Schemathesis failure class; others are named by their title. */
const KINDS: Record<string, string> = {
  ServerError: 'server errors',
  UndefinedStatusCode: 'undocumented statuses',
  JsonSchemaError: 'response schema violations',
};

export interface FuzzSummary {
  ok: boolean;
  seconds: number;
  runningSeconds: number;
  requests: number;
  /** Distinct failures by kind, all of them and those outside the baseline. */
  failures: Record<string, { found: number; new: number }>;
  accepted: Array<Failure & { reason: string }>;
  new: Failure[];
  problems: string[];
  lines: string[];
}

export function summarize(
  report: RunReport,
  failures: readonly Failure[],
  baseline: { entries: BaselineEntry[]; problems: string[] },
  tagsOf: (operation: string) => readonly string[],
  seconds: number,
): FuzzSummary {
  const byKind: FuzzSummary['failures'] = Object.fromEntries(
    Object.values(KINDS).map((kind) => [kind, { found: 0, new: 0 }]),
  );
  const accepted: FuzzSummary['accepted'] = [];
  const fresh: Failure[] = [];
  const acceptedBy = new Map<BaselineEntry, Failure[]>();
  for (const failure of failures) {
    // A server error is told by its status: a 501 (preview_not_supported) is not a 500.
    const name =
      failure.type === 'ServerError' && failure.status !== 500
        ? `server errors ${failure.status}`
        : (KINDS[failure.type] ?? failure.title.toLowerCase());
    const kind = (byKind[name] ??= { found: 0, new: 0 });
    kind.found += 1;
    const entry = baseline.entries.find((candidate) => matches(candidate, failure, tagsOf));
    if (entry) {
      accepted.push({ ...failure, reason: entry.reason });
      acceptedBy.set(entry, [...(acceptedBy.get(entry) ?? []), failure]);
    } else {
      kind.new += 1;
      fresh.push(failure);
    }
  }
  const unused = baseline.entries.filter((entry) => !failures.some((failure) => matches(entry, failure, tagsOf)));
  const problems = [
    ...baseline.problems,
    ...fresh.map(
      (failure) =>
        `${labelOf(failure)}: ${failure.title} (${failure.check}${failure.status ? `, status ${failure.status}` : ''}), ${failure.count}x, e.g. case ${failure.caseId}`,
    ),
    ...report.errors.map((error) => `Schemathesis error: ${error.title} (${error.count}x)`),
    ...(report.complete ? [] : [`the run did not complete (${report.stop_reason})`]),
  ];
  const describe = (entry: BaselineEntry, covered: Failure[]) => [
    `    ${entry.check}${entry.status ? ` ${entry.status}` : ''}: ${covered.length} operation(s), ${covered.reduce((sum, failure) => sum + failure.count, 0)} request(s) - ${entry.reason}`,
    `      ${[...new Set(covered.map(labelOf))].join(', ')}`,
  ];
  const lines = [
    `Fuzz run (Schemathesis, every check, every operation): ${report.test_cases.generated} requests generated in ${Math.round(report.running_time)} s (FUZZ_SECONDS ${seconds})`,
    `  distinct failures by kind, found (outside the baseline): ${Object.entries(byKind)
      .map(([kind, count]) => `${kind} ${count.found} (${count.new})`)
      .join(', ')}`,
    `  accepted by test/fuzz/baseline.yaml: ${accepted.length}`,
    ...[...acceptedBy].flatMap(([entry, covered]) => describe(entry, covered)),
    ...(unused.length
      ? [
          `  baseline entries this run did not need: ${unused.map((entry) => `${entry.check}${entry.status ? ` ${entry.status}` : ''}${entry.tag ? ` [${entry.tag}]` : ''}`).join('; ')}`,
        ]
      : []),
    ...problems.map((problem) => `  FAILED: ${problem}`),
    problems.length
      ? `fuzz: FAILED (${problems.length} problem(s); replay a case with: cd .test-results/fuzz && ../../.tools/schemathesis-venv/bin/st replay <case>)`
      : 'fuzz: passed (no failure outside the baseline)',
  ];
  return {
    ok: problems.length === 0,
    seconds,
    runningSeconds: Math.round(report.running_time),
    requests: report.test_cases.generated,
    failures: byKind,
    accepted,
    new: fresh,
    problems,
    lines,
  };
}
