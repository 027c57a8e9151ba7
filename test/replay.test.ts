import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { describe, expect, inject, it } from 'vitest';
import { replayScenarios } from './replay/scenarios';
import { quietRuntime } from './support/temporal';

quietRuntime();

const historiesDir = path.join(import.meta.dirname, 'histories');
const historyFiles = readdirSync(historiesDir)
  .filter((file) => file.endsWith('.json'))
  .sort();

function loadHistory(file: string) {
  return JSON.parse(readFileSync(path.join(historiesDir, file), 'utf8')) as { events: Array<Record<string, any>> };
}

async function replay(histories: Array<{ workflowId: string; history: unknown }>) {
  const results = [];
  const replayable = histories.map(({ workflowId, history }) => ({ workflowId, history: historyFromJSON(history) }));
  for await (const result of Worker.runReplayHistories(
    { workflowBundle: { codePath: inject('stack').workflowBundlePath } },
    replayable,
  )) {
    results.push(result);
  }
  return results;
}

describe('recorded workflow histories', () => {
  it('has a committed history for every replay scenario', () => {
    expect(historyFiles).toEqual(replayScenarios.map((scenario) => `${scenario.name}.json`).sort());
  });

  it('replays every committed history against the current workflow code', async () => {
    const results = await replay(historyFiles.map((file) => ({ workflowId: file, history: loadHistory(file) })));
    expect(results).toHaveLength(historyFiles.length);
    for (const result of results) expect(result.error, result.workflowId).toBeUndefined();
  });

  it('fails with a determinism violation when a history no longer matches the code', async () => {
    const history = loadHistory('lead-dial-answered.json');
    const scheduled = history.events.find(
      (event) => event.activityTaskScheduledEventAttributes?.activityType.name === 'placeCall',
    );
    expect(scheduled).toBeDefined();
    // As if an older version of the workflow had called a different activity first.
    scheduled!.activityTaskScheduledEventAttributes.activityType.name = 'sendWhatsAppTemplate';
    const [result] = await replay([{ workflowId: 'altered', history }]);
    expect(result?.error).toBeInstanceOf(DeterminismViolationError);
  });
});
