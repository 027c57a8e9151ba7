import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { leadWorkflowId } from '../lib/temporal/workflow-ids';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ownTemporalServer } from '../scripts/stack/test-temporal';
import { startTestApi } from './support/api';
import { carrierDependencies, startTestCarrier } from './support/carrier';
import { useChromium } from './support/browser';
import { useTestDatabase } from './support/database';
import { startReceiver } from './support/http-receiver';
import { journey, runningJourneyCampaign } from './support/journeys';
import { startTestWorker, uniqueTaskQueue, useTemporalClient } from './support/temporal';
import { until, untilServing } from './support/until';
import { createTestWorkspace } from './support/workspace';

/*
 * docs/temporal-ui.md#manual-recovery-finding-and-resolving-stuck-runs,
 * walked as an operator walks it: in the Temporal Web UI the dev server serves
 * (the one `npm start` runs, UI 2.54.1) or, under `npm run test:cluster`, the cluster's (UI 2.42.1, as
 * docker-compose.yml runs it), in headless chromium, pressing the buttons the runbook names. The shared
 * test server runs without its UI, so this file starts one of its own with it.
 */
// The same kind of server the suites run on: the dev server's embedded UI, or under `npm run test:cluster` the
// cluster's UI server (the one docker-compose.yml runs).
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'temporal-ui-'));
const server = await ownTemporalServer(inject('stack').temporal, dataDir, { ui: true });
afterAll(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});
const ui = server.uiUrl!;
await untilServing(ui);

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient(uniqueTaskQueue(), server.address);
const api = await startTestApi({ db, url, temporal });
await startTestWorker(
  temporal.taskQueue,
  { db, ...carrierDependencies(await startTestCarrier(db), api) },
  server.address,
);
const operator = await createTestWorkspace(db, {
  scopes: ['campaigns.edit', 'workflows.view', 'workflows.recover'],
  settings: { features: ['workflows'] },
});
const browser = await useChromium();

type Run = Record<string, any>;
const receiver = await startReceiver(() => 400);
const { published, campaign } = await runningJourneyCampaign(
  db,
  operator.workspaceId,
  journey(
    [
      { id: 'start', type: 'start' },
      { id: 'notify', type: 'webhook', data: { url: receiver.url } },
      { id: 'done', type: 'end' },
    ],
    [
      ['start', 'notify'],
      ['notify', 'done'],
    ],
  ),
);

const readRun = async (runId: string) =>
  (await (await api.request('GET', `/workflows/${published.id}/runs/${runId}`, { key: operator.key })).json()) as Run;

async function operatorPage() {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(15_000);
  return page;
}

/** A lead whose webhook node is refused for good: its run waits in needs_recovery. */
async function stuckRun() {
  const idempotencyKey = randomUUID();
  const pushed = await api.request('POST', `/v1/campaigns/${campaign.id}/leads`, {
    key: operator.key,
    body: { lead: { phone: '+14155550180', fields: {} }, idempotencyKey },
  });
  expect(pushed.status).toBe(202);
  const { leadId } = (await pushed.json()) as { leadId: string };
  await until(
    () => readRun(leadId),
    (run) => run.status === 'needs_recovery',
  );
  return { runId: leadId, workflowId: leadWorkflowId(campaign.id, idempotencyKey) };
}

/** Step 1: Workflows, "View raw query" (the </> button), the query, "Search"; then open the run. */
async function findAndOpen(page: Page, workflowId: string) {
  await page.goto(`${ui}/namespaces/default/workflows`);
  // An icon button: its name is the tooltip shown on hover.
  const rawQuery = page.getByTestId('toggle-manual-query');
  await rawQuery.hover();
  await page.getByText('View raw query', { exact: true }).waitFor();
  await rawQuery.click();
  await page.getByPlaceholder('Enter a query').fill('JourneyStatus = "needs_recovery"');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  // The list follows the search attribute: one that no longer waits drops out of it.
  await page.getByRole('link', { name: workflowId, exact: true }).click();
  await page.getByRole('heading', { name: workflowId }).waitFor();
}

/** Step 2: the "Queries" tab, Query Type journeyRunState, "Run Query". */
async function runStateQuery(page: Page) {
  await page.getByRole('tab', { name: 'Queries' }).click();
  await page.getByTestId('query-select-button').click();
  await page.getByRole('option', { name: 'journeyRunState', exact: true }).click();
  await page.getByRole('button', { name: 'Run Query' }).click();
  const result = page.locator('main').getByText('"allowedActions"');
  await result.waitFor();
  return page.locator('main').innerText();
}

/** Step 3: "More Actions", then "Send a Signal" or "Send an Update", the name recover. */
async function openDecision(page: Page, action: 'Send a Signal' | 'Send an Update'): Promise<Locator> {
  await page.getByRole('button', { name: 'More Actions' }).click();
  await page.getByRole('menuitem', { name: action }).click();
  const dialog = page.getByRole('dialog', { name: action });
  await dialog.getByTestId(action === 'Send a Signal' ? 'signal-select-button' : 'update-select-button').click();
  await dialog.getByRole('option', { name: 'recover', exact: true }).click();
  return dialog;
}

/**
 * The JSON in Data, then "Submit". Leaving Data formats the JSON, which makes the dialog taller: a press
 * on Submit straight from the box lands where the button was (the runbook says to press it again).
 */
async function submitDecision(dialog: Locator, decision: Record<string, unknown>) {
  // The JSON editor under "Data": UI 2.54.1 names it by that label, UI 2.42.1 (the cluster's) leaves its name empty.
  const data = dialog
    .getByRole('textbox', { name: 'Data' })
    .or(dialog.locator('[role="textbox"][data-language="json"]'))
    .first();
  await data.click();
  await data.press('Control+A');
  await data.page().keyboard.insertText(JSON.stringify(decision));
  // Its hint: "Single JSON payload supported." in 2.54.1, "(only single JSON payload supported)" in 2.42.1.
  await dialog.getByText(/single JSON payload supported/i).click();
  await dialog.getByRole('button', { name: 'Submit' }).click();
}

describe('the manual recovery runbook (docs/temporal-ui.md) in the Temporal Web UI', () => {
  it('finds a run by JourneyStatus, shows what it awaits by the journeyRunState query, and resolves it by the recover signal', async () => {
    const { runId, workflowId } = await stuckRun();
    const page = await operatorPage();
    await findAndOpen(page, workflowId);
    const state = await runStateQuery(page);
    expect(state).toContain('"status": "needs_recovery"');
    expect(state).toMatch(/"awaiting": \{\s*"nodeId": "notify",\s*"kind": "recovery",/);

    const dialog = await openDecision(page, 'Send a Signal');
    await submitDecision(dialog, {
      action: 'skip',
      output: { status: 200 },
      decidedBy: 'alice@example.com',
      note: 'receiver was down',
    });
    await dialog.waitFor({ state: 'hidden' });
    const done = await until(
      () => readRun(runId),
      (run) => run.status === 'completed' && run.endedAt !== null,
    );
    expect(done.awaiting).toBeNull();
    expect(done.decisions).toEqual([
      expect.objectContaining({ nodeId: 'notify', action: 'skip', decidedBy: 'alice@example.com', via: 'temporal' }),
    ]);
    await page.close();
  });

  it('"Send an Update" refuses a decision without decidedBy in the dialog, and takes it once named', async () => {
    const { runId, workflowId } = await stuckRun();
    const page = await operatorPage();
    await findAndOpen(page, workflowId);

    const dialog = await openDecision(page, 'Send an Update');
    await submitDecision(dialog, { action: 'end' });
    await dialog.getByRole('alert').filter({ hasText: 'decidedBy is required' }).waitFor();
    expect((await readRun(runId)).status).toBe('needs_recovery');

    await submitDecision(dialog, { action: 'end', decidedBy: 'bob@example.com', note: 'lead withdrew' });
    await dialog.waitFor({ state: 'hidden' });
    const ended = await until(
      () => readRun(runId),
      (run) => run.status === 'failed' && run.endedAt !== null,
    );
    expect(ended.awaiting).toBeNull();
    expect(ended.decisions).toEqual([
      expect.objectContaining({
        nodeId: 'notify',
        action: 'end',
        decidedBy: 'bob@example.com',
        via: 'temporal',
        note: 'lead withdrew',
      }),
    ]);
    await page.close();
  });
});
