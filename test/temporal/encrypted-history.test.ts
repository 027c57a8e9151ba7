import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Client } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import protos from '@temporalio/proto';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { codecRouter, CODEC_MAX_BODY_BYTES, CODEC_MAX_PAYLOADS } from '../../api/codec/codec-routes';
import { keyringSchema, newKeyringEntry } from '../../lib/secrets/keyring';
import { EncryptionCodec, temporalDataConverter } from '../../lib/temporal/payload-codec';
import { startTestApi } from '../support/api';
import { carrierDependencies, startTestCarrier } from '../support/carrier';
import { useTestDatabase } from '../support/database';
import { journey, runningJourneyCampaign } from '../support/journeys';
import { startedLeadWorkflow } from '../support/lead-workflows';
import { startTestWorker, uniqueTaskQueue, useTemporalClient } from '../support/temporal';
import { createTestWorkspace } from '../support/workspace';

/*
 * docs/temporal-ui.md#encrypted-payloads: a lead's workflow run end to end on the real server by a client and a
 * worker built with the payload codec, its history then read as the server holds it (a client without the codec),
 * and the codec server the Web UI calls.
 */
const ring = keyringSchema.parse(newKeyringEntry('k1'));
const dataConverter = temporalDataConverter(ring);
const codec = new EncryptionCodec(ring);
const token = randomUUID() + randomUUID();
const uiOrigin = 'http://ui.example:8233';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient(uniqueTaskQueue(), undefined, dataConverter);
const api = await startTestApi({
  db,
  url,
  temporal,
  codecServer: { codec, token, corsOrigin: uiOrigin, corsCredentials: false },
});
await startTestWorker(
  temporal.taskQueue,
  { db, ...carrierDependencies(await startTestCarrier(db), api) },
  undefined,
  dataConverter,
);
const owner = await createTestWorkspace(db, { scopes: ['campaigns.edit', 'campaigns.view'] });
// A journey's run loads its lead (phone, name, fields) into its state: the history of a journey run holds them.
const { campaign } = await runningJourneyCampaign(
  db,
  owner.workspaceId,
  journey(
    [
      { id: 'start', type: 'start' },
      { id: 'done', type: 'end' },
    ],
    [['start', 'done']],
  ),
);
const phone = '+14155550177';
const name = 'Grace Brewster Hopper';
const idempotencyKey = randomUUID();
const pushed = await api.request('POST', `/v1/campaigns/${campaign.id}/leads`, {
  key: owner.key,
  body: { lead: { phone, name }, idempotencyKey },
});
expect(pushed.status).toBe(202);
const handle = await startedLeadWorkflow(temporal.client, campaign.id, idempotencyKey);
// Read through the codec: the worker's result decodes, so the run went end to end under it.
const result = await handle.result();
// The history as the server stores it: a client without the codec.
const raw = new Client({ connection: temporal.connection });
const history = await raw.workflow.getHandle(handle.workflowId).fetchHistory();
const historyBytes = Buffer.from(protos.temporal.api.history.v1.History.encode(history).finish());
const startedInput = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads! as Payload[];
/**
 * Every payload of every event the codec covers: inputs, results, activity inputs and results, markers, failures'
 * details. Not among them: search attributes (the server indexes them, so they hold ids only: campaign, workspace)
 * and the SDK's own patch markers (the patch's id, which workflows/ names).
 */
function payloadsOf(node: unknown, found: Payload[] = []): Payload[] {
  if (node === null || typeof node !== 'object' || ArrayBuffer.isView(node)) return found;
  if ('markerName' in node && node.markerName === 'core_patch') return found;
  if ('metadata' in node && 'data' in node) found.push(node as Payload);
  else
    for (const [key, value] of Object.entries(node))
      if (key !== 'searchAttributes' && key !== 'upsertWorkflowSearchAttributesEventAttributes')
        payloadsOf(value, found);
  return found;
}
const allPayloads = payloadsOf(history.events);

const toJson = (payload: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value!).toString('base64')]),
  ),
  data: Buffer.from(payload.data ?? []).toString('base64'),
});
const codecPost = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${api.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const bearer = { authorization: `Bearer ${token}` };

describe('Temporal payloads sealed by the codec (lib/temporal/payload-codec.ts)', () => {
  it("keeps a lead's phone and name out of the history the server stores", () => {
    expect(result).toBeDefined();
    expect(history.events!.length).toBeGreaterThan(5);
    for (const secret of [phone, phone.slice(2), name, 'Hopper'])
      expect(historyBytes.includes(Buffer.from(secret)), `the history holds "${secret}"`).toBe(false);
    expect(startedInput.length).toBeGreaterThan(0);
    expect(allPayloads.length).toBeGreaterThan(startedInput.length);
    const plain = allPayloads.filter(
      (payload) => Buffer.from(payload.metadata!.encoding!).toString() !== 'binary/encrypted',
    );
    expect(plain.map((payload) => JSON.stringify(payload))).toEqual([]);
  });

  it('holds them under the codec: the same history decodes to the lead', async () => {
    const decoded = await codec.decode(allPayloads);
    expect(JSON.stringify(decoded.map((payload) => defaultPayloadConverter.fromPayload(payload)))).toContain(phone);
  });
});

describe('the codec server (api/codec/codec-routes.ts)', () => {
  it('decodes for the bearer of the operator token, or for a path carrying it, and for no one else', async () => {
    const body = { payloads: allPayloads.map(toJson) };
    const decoded = await codecPost('/codec/decode', body, bearer);
    expect(decoded.status).toBe(200);
    const payloads = ((await decoded.json()) as { payloads: Array<{ data: string }> }).payloads;
    expect(payloads.map((payload) => Buffer.from(payload.data, 'base64').toString()).join()).toContain(phone);
    expect((await codecPost(`/codec/${token}/decode`, body)).status).toBe(200);
    for (const refused of [
      await codecPost('/codec/decode', body),
      await codecPost('/codec/decode', body, { authorization: `Bearer ${token}x` }),
      await codecPost(`/codec/${token.slice(1)}/decode`, body),
      await codecPost('/codec/decode', body, { authorization: `Bearer ${owner.key}` }),
    ]) {
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ error: 'unauthorized' });
    }
  });

  it('encodes under the current key what decodes back', async () => {
    const plain = defaultPayloadConverter.toPayload({ phone });
    const encoded = (await (await codecPost('/codec/encode', { payloads: [toJson(plain)] }, bearer)).json()) as any;
    expect(Buffer.from(encoded.payloads[0].metadata.encoding, 'base64').toString()).toBe('binary/encrypted');
    expect(Buffer.from(encoded.payloads[0].metadata['encryption-key-id'], 'base64').toString()).toBe('k1');
    const decoded = (await (await codecPost('/codec/decode', encoded, bearer)).json()) as any;
    expect(decoded.payloads[0]).toEqual(toJson(plain));
  });

  it('refuses a tampered payload, a body not of payloads, too many payloads, in the error shape', async () => {
    const [sealed] = await codec.encode([defaultPayloadConverter.toPayload({ phone })]);
    const tampered = Buffer.from(sealed!.data!);
    tampered[20]! ^= 1;
    const bad = await codecPost('/codec/decode', { payloads: [toJson({ ...sealed!, data: tampered })] }, bearer);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      error: 'invalid_body',
      issues: [{ message: expect.stringContaining('fails authentication') }],
    });
    const notBase64 = await codecPost('/codec/decode', { payloads: [{ data: '*' }] }, bearer);
    expect(await notBase64.json()).toMatchObject({
      error: 'invalid_body',
      issues: [{ path: ['payloads', '0', 'data'] }],
    });
    const tooMany = await codecPost('/codec/decode', { payloads: Array(CODEC_MAX_PAYLOADS + 1).fill({}) }, bearer);
    expect(tooMany.status).toBe(400);
    expect((await codecPost('/codec/decode', 'not json', bearer)).status).toBe(400);
    const huge = await codecPost('/codec/decode', { payloads: [{ data: 'A'.repeat(CODEC_MAX_BODY_BYTES) }] }, bearer);
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: 'internal_error', detail: 'request body is over 1 MB' });
  });

  // A full body at both caps: 1,000 sealed payloads filling 1 MB. About 150 ms on an idle 2-CPU machine (JSON,
  // validation, AES-GCM and protobuf); the budget is a loaded CI machine's, where it took up to 1 s.
  it('decodes its worst case at the caps, 1,000 sealed payloads in 1 MB, within 3,000 ms', async () => {
    const many = await codec.encode(
      Array.from({ length: CODEC_MAX_PAYLOADS }, (_, index) =>
        defaultPayloadConverter.toPayload({ index, pad: 'p'.repeat(600) }),
      ),
    );
    const body = JSON.stringify({ payloads: many.map(toJson) });
    expect(body.length).toBeGreaterThan(0.9 * CODEC_MAX_BODY_BYTES);
    expect(body.length).toBeLessThan(CODEC_MAX_BODY_BYTES);
    const started = performance.now();
    const answer = await codecPost('/codec/decode', body, bearer);
    const elapsed = performance.now() - started;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { payloads: unknown[] }).payloads).toHaveLength(CODEC_MAX_PAYLOADS);
    expect(elapsed, 'a full request of sealed payloads took too long').toBeLessThan(3_000);
  });

  it("answers the Web UI's origin, and only it, with CORS; credentials only when configured", async () => {
    const preflight = (base: string, origin: string) =>
      fetch(`${base}/codec/decode`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-namespace',
        },
      });
    const allowed = await preflight(api.baseUrl, uiOrigin);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    expect(allowed.headers.get('access-control-allow-headers')).toContain('X-Namespace');
    expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
    const other = await preflight(api.baseUrl, 'http://evil.example');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();

    const withCredentials = express().use(
      '/codec',
      codecRouter({ codec, token, corsOrigin: uiOrigin, corsCredentials: true }),
    );
    const server = withCredentials.listen(0, '127.0.0.1');
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
    await new Promise<void>((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect((await preflight(base, uiOrigin)).headers.get('access-control-allow-credentials')).toBe('true');
  });
});
