import { describe, expect, it } from 'vitest';
import { publishJourney, saveJourney } from '../../api/journeys/journeys';
import { createEgress } from '../../lib/http/egress';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { startReceiver } from '../support/http-receiver';
import { journey, publishedJourney } from '../support/journeys';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { until } from '../support/until';
import { createTestWorkspace } from '../support/workspace';

// Journey webhooks through the egress guard on the real Temporal server. This file's worker has no loopback
// allowance (as in production); it allows http:// only, so that the address alone is what refuses.

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
await startTestWorker(temporal.taskQueue, {
  db,
  ...carrierDependencies(await startTestCarrier(db), api),
  egress: createEgress({ allowHttp: true }),
});
const operator = await createTestWorkspace(db, {
  scopes: ['workflows.view', 'workflows.run'],
  settings: { features: ['workflows'] },
});
const request = (method: string, path: string, body?: unknown) =>
  api.request(method, path, { key: operator.key, body });

const REFUSED_URL =
  'node "hook" (webhook): data.url: must start with http:// or https:// and a host written out, without {{references}} (a reference may go in the path or query)';

const hookJourney = (hookUrl: string) =>
  journey(
    [
      { id: 'start', type: 'start', data: { fields: [{ name: 'callbackUrl', type: 'string' }] } },
      { id: 'hook', type: 'webhook', data: { url: hookUrl, body: '{"secret":"none"}' } },
      { id: 'done', type: 'end' },
    ],
    [
      ['start', 'hook'],
      ['hook', 'done'],
    ],
  );

describe('a webhook URL whose host is a reference', () => {
  it('is refused by the variable catalog (422 workflow_invalid) and when published; a reference in the path is not', async () => {
    const catalog = await request('POST', '/workflows/variable-catalog', {
      definition: hookJourney('{{start.fields.callbackUrl}}'),
    });
    expect(catalog.status).toBe(422);
    expect(await catalog.json()).toEqual({ error: 'workflow_invalid', details: [REFUSED_URL] });

    const draft = await saveJourney(db, operator.workspaceId, {
      definition: hookJourney('{{start.fields.callbackUrl}}'),
    });
    await expect(publishJourney(db, operator.workspaceId, draft.id)).rejects.toMatchObject({
      code: 'workflow_invalid',
      extras: { details: [REFUSED_URL] },
    });
    expect((await db.journey.findUniqueOrThrow({ where: { id: draft.id } })).publishedRevision).toBeNull();

    const inPath = await request('POST', '/workflows/variable-catalog', {
      definition: hookJourney('https://crm.example.com/hooks/{{start.fields.callbackUrl}}'),
    });
    expect(inPath.status).toBe(200);
  });
});

describe('a run whose webhook URL reaches the product’s own loopback', () => {
  it('records "refused" (as for a closed port) and never reaches the server, by address, name or IPv4-mapped form', async () => {
    const inside = await startReceiver(() => ({ status: 200, json: { secret: 'of the inside' } }));
    const port = new URL(inside.url).port;
    // A journey published before the rule above (its revision written as it was then): the guard is the last line.
    const published = await publishedJourney(db, operator.workspaceId, hookJourney('https://example.com/hooks'));
    await db.journeyRevision.update({
      where: { journeyId_revision: { journeyId: published.id, revision: published.publishedRevision! } },
      data: { definition: hookJourney('{{start.fields.callbackUrl}}') as object },
    });

    const targets = ['127.0.0.1', 'localhost', '127.1', '2130706433', '[::ffff:7f00:1]'].map(
      (host) => `http://${host}:${port}/hooks`,
    );
    const runs: Array<{ target: string; id: string }> = [];
    for (const target of targets) {
      const started = await request('POST', `/workflows/${published.id}/runs`, { fields: { callbackUrl: target } });
      expect(started.status, target).toBe(201);
      runs.push({ target, id: ((await started.json()) as { id: string }).id });
    }
    for (const { target, id } of runs) {
      const run = await until(
        async () =>
          (await (await request('GET', `/workflows/${published.id}/runs/${id}`)).json()) as Record<string, any>,
        (value) => value.status === 'needs_recovery',
        90_000,
      );
      expect(run.awaiting, target).toMatchObject({
        nodeId: 'hook',
        kind: 'recovery',
        errorType: 'journey_webhook_failed',
        reason: expect.stringContaining(`POST ${target}: refused`),
      });
      expect(run.awaiting.reason, target).not.toMatch(/ECONN|private|loopback|not allowed/);
      expect(run.variables.hook, target).toBeUndefined();
    }
    expect(inside.received).toEqual([]);
  });
});
