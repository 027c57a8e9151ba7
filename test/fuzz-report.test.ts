import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readBaseline, readFailures, summarize, type Failure, type RunReport } from '../scripts/fuzz/report';

const dir = mkdtempSync(path.join(os.tmpdir(), 'fuzz-report-'));
const report: RunReport = {
  running_time: 120.2,
  complete: true,
  stop_reason: 'completed',
  test_cases: { generated: 5000 },
  errors: [],
};
const failure = (operation: string, check: string, type: string, status: number | null): Failure => ({
  operation,
  check,
  type,
  title: type,
  status,
  followUp: null,
  count: 2,
  caseId: 'abc123',
});
const notBuilt = failure('GET /phone-numbers', 'not_a_server_error', 'ServerError', 501);
const tags = (operation: string) => (operation === 'GET /phone-numbers' ? ['Not yet built'] : ['Campaigns']);

function baselineFile(text: string) {
  const file = path.join(dir, `baseline-${Math.random()}.yaml`);
  writeFileSync(file, text);
  return readBaseline(file);
}

describe("the fuzz run's verdict (scripts/fuzz/report.ts)", () => {
  const baseline = baselineFile(`
- check: not_a_server_error
  status: 501
  tag: Not yet built
  reason: not built yet
`);

  it('passes a run whose every failure an entry accepts', () => {
    const summary = summarize(report, [notBuilt], baseline, tags, 120);
    expect(summary.ok).toBe(true);
    expect(summary.accepted).toHaveLength(1);
    expect(summary.lines.at(-1)).toMatch(/passed/);
  });

  it('fails on a failure no entry accepts: another status, operation or check', () => {
    for (const other of [
      failure('GET /phone-numbers', 'not_a_server_error', 'ServerError', 500),
      failure('GET /campaigns', 'not_a_server_error', 'ServerError', 501),
      failure('GET /phone-numbers', 'status_code_conformance', 'UndefinedStatusCode', 501),
    ]) {
      const summary = summarize(report, [notBuilt, other], baseline, tags, 120);
      expect(summary.ok, JSON.stringify(other)).toBe(false);
      expect(summary.new).toEqual([other]);
      expect(summary.lines.at(-1)).toMatch(/FAILED/);
    }
    expect(
      summarize(report, [failure('GET /campaigns', 'not_a_server_error', 'ServerError', 500)], baseline, tags, 120)
        .failures['server errors'],
    ).toEqual({ found: 1, new: 1 });
  });

  it('fails on an entry without a one-line reason, an unknown key, and a Schemathesis error', () => {
    expect(baselineFile('- check: not_a_server_error\n  status: 501\n').problems).toHaveLength(1);
    expect(baselineFile('- check: x\n  reason: "two\\nlines"\n').problems).toHaveLength(1);
    expect(baselineFile('- check: x\n  reason: fine\n  operation: GET /x\n').problems).toEqual([
      expect.stringMatching(/unknown key operation/),
    ]);
    expect(summarize({ ...report, errors: [{ title: 'Runtime Error', count: 1 }] }, [], baseline, tags, 120).ok).toBe(
      false,
    );
    expect(summarize({ ...report, complete: false, stop_reason: 'interrupted' }, [], baseline, tags, 120).ok).toBe(
      false,
    );
  });

  it('reads each distinct failure once from the event stream, with the status that failed it', async () => {
    const events = path.join(dir, 'events.ndjson');
    const scenario = (caseId: string, status: number, check: Record<string, unknown>) =>
      JSON.stringify({
        ScenarioFinished: {
          recorder: {
            checks: { [caseId]: [{ name: 'not_a_server_error', status: 'success' }, check] },
            interactions: { [caseId]: { response: { status_code: status } } },
          },
        },
      });
    const serverError = {
      name: 'not_a_server_error',
      status: 'failure',
      failure_info: {
        failure: { type: 'ServerError', operation: 'GET /phone-numbers', title: 'Server error', message: '' },
      },
    };
    const probe = {
      name: 'ignored_auth',
      status: 'failure',
      failure_info: {
        failure: {
          type: 'IgnoredAuth',
          operation: 'GET /campaigns',
          title: 'Unexpected response',
          message: 'Expected 401 or 403, got `429 Too Many Requests`',
        },
      },
    };
    writeFileSync(
      events,
      [
        '{"Initialize":{}}',
        scenario('a', 501, serverError),
        scenario('b', 501, serverError),
        scenario('c', 200, probe),
      ].join('\n'),
    );
    const failures = await readFailures(events);
    expect(failures).toEqual([
      {
        operation: 'GET /campaigns',
        check: 'ignored_auth',
        type: 'IgnoredAuth',
        title: 'Unexpected response',
        status: 429,
        followUp: null,
        count: 1,
        caseId: 'c',
      },
      {
        operation: 'GET /phone-numbers',
        check: 'not_a_server_error',
        type: 'ServerError',
        title: 'Server error',
        status: 501,
        followUp: null,
        count: 2,
        caseId: 'a',
      },
    ]);
  });

  it("narrows an entry by the follow-up that answered, read from the failure's message", async () => {
    const events = path.join(dir, 'follow-ups.ndjson');
    const notFound = (caseId: string, followUp: string) =>
      JSON.stringify({
        ScenarioFinished: {
          recorder: {
            checks: {
              [caseId]: [
                {
                  name: 'ensure_resource_availability',
                  status: 'failure',
                  failure_info: {
                    failure: {
                      type: 'EnsureResourceAvailability',
                      operation: 'POST /campaigns',
                      title: 'Created resource not found',
                      message: `The API returned \`404 Not Found\` for a resource that was just created.\n\nCreated with      : \`POST /campaigns\`\nNot available with: \`${followUp}\``,
                    },
                  },
                },
              ],
            },
            interactions: { [caseId]: { response: { status_code: 404 } } },
          },
        },
      });
    writeFileSync(
      events,
      [notFound('s', 'GET /campaigns/{id}/sheet'), notFound('c', 'GET /campaigns/{id}')].join('\n'),
    );
    const failures = await readFailures(events);
    expect(failures.map((found) => [found.followUp, found.status])).toEqual([
      ['GET /campaigns/{id}/sheet', 404],
      ['GET /campaigns/{id}', 404],
    ]);
    const sheetOnly = baselineFile(`
- check: ensure_resource_availability
  status: 404
  operations: ['POST /campaigns']
  followUps: ['GET /campaigns/{id}/sheet']
  reason: no sheet yet
`);
    const summary = summarize(report, failures, sheetOnly, tags, 120);
    expect(summary.new.map((found) => found.followUp)).toEqual(['GET /campaigns/{id}']);
    expect(summary.lines.join('\n')).toContain('POST /campaigns then GET /campaigns/{id}/sheet');
    expect(summary.problems[0]).toMatch(/^POST \/campaigns then GET \/campaigns\/\{id\}: Created resource not found/);
  });
});
