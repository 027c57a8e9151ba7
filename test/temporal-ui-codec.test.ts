import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import protos from '@temporalio/proto';
import express from 'express';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { codecRouter } from '../api/codec/codec-routes';
import { keyringSchema, newKeyringEntry } from '../lib/secrets/keyring';
import { EncryptionCodec, temporalDataConverter } from '../lib/temporal/payload-codec';
import { freePort } from '../scripts/stack/child-process';
import { ownTemporalServer } from '../scripts/stack/test-temporal';
import { useChromium } from './support/browser';
import { untilServing } from './support/until';

/*
 * docs/temporal-ui.md#the-codec-server, as an operator sees it: a run's input sealed by the codec, shown decoded in
 * the Web UI (the dev server's embedded UI, or under `npm run test:cluster` the cluster's UI server) through the codec
 * endpoint it was started with, while the history the server holds has no plaintext of it.
 */
const ring = keyringSchema.parse(newKeyringEntry('k1'));
const token = randomUUID() + randomUUID();
const codecPort = await freePort();
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'temporal-ui-codec-'));
const server = await ownTemporalServer(inject('stack').temporal, dataDir, {
  ui: true,
  uiCodecEndpoint: `http://127.0.0.1:${codecPort}/codec/${token}`,
});
afterAll(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});
const ui = server.uiUrl!;

// The codec server as the API mounts it, on the port the UI was told, answering the UI's origin.
const decodeRequests: string[] = [];
const codecApp = express()
  .use((req, _res, next) => {
    if (req.method === 'POST') decodeRequests.push(req.path);
    next();
  })
  .use(
    '/codec',
    codecRouter({ codec: new EncryptionCodec(ring), token, corsOrigin: new URL(ui).origin, corsCredentials: false }),
  );
const codecServer = codecApp.listen(codecPort, '127.0.0.1');
afterAll(() => new Promise<void>((resolve) => codecServer.close(() => resolve())));
await new Promise<void>((resolve) => codecServer.once('listening', resolve));
expect((codecServer.address() as AddressInfo).port).toBe(codecPort);
await untilServing(ui);

const connection = await Connection.connect({ address: server.address });
afterAll(() => connection.close());
const sealing = new Client({ connection, dataConverter: temporalDataConverter(ring) });
const raw = new Client({ connection });
const lead = { phone: '+14155550166', name: 'Katherine Coleman Johnson' };
const workflowId = `codec-ui-${randomUUID()}`;
// No worker polls this queue: the run waits, its input in its first event, as a lead's does before its worker picks it up.
await sealing.workflow.start('leadDialWorkflow', { taskQueue: `nobody-${randomUUID()}`, workflowId, args: [lead] });
const browser = await useChromium();

describe('the Web UI through the codec server', () => {
  it("shows a run's sealed input decoded, while the stored history holds no plaintext of it", async () => {
    const history = await raw.workflow.getHandle(workflowId).fetchHistory();
    const stored = Buffer.from(protos.temporal.api.history.v1.History.encode(history).finish());
    for (const secret of [lead.phone.slice(2), 'Coleman'])
      expect(stored.includes(Buffer.from(secret)), `the stored history holds "${secret}"`).toBe(false);

    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.setDefaultTimeout(30_000);
    await page.goto(`${ui}/namespaces/default/workflows/${workflowId}`);
    await page.getByText(lead.name).first().waitFor();
    expect(await page.locator('body').innerText()).toContain(lead.phone);
    expect(
      decodeRequests.some((request) => request.endsWith('/decode')),
      'the UI called the codec server',
    ).toBe(true);
    await page.close();
  });
});
