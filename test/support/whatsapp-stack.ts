import { expect } from 'vitest';
import { freePort } from '../../scripts/stack/child-process';
import type { Database } from '../../lib/database';
import type { SimulatorsSetting } from '../../lib/simulators';
import { connectWhatsAppSender } from '../../lib/whatsapp/senders';
import { createSimulatedWhatsAppClient } from '../../lib/whatsapp/graph-client';
import { startTestApi, type RunningApi } from './api';
import { carrierDependencies, startTestCarrier } from './carrier';
import type { TestTemporal } from './temporal';
import { startTestWorker } from './temporal';
import { until } from './until';
import { startTestWhatsApp, TEST_WHATSAPP_APP_SECRET, type TestWhatsApp } from './whatsapp';
import type { TestWorkspace } from './workspace';

export interface WhatsAppStack {
  api: RunningApi;
  whatsapp: TestWhatsApp;
}

/**
 * The WhatsApp channel end to end as production wires it: the API (its provider the simulated one over
 * HTTP, its webhook endpoint checking the app secret), the simulated provider posting its signed webhooks
 * to that API, and a worker sending through the provider. The API must know the provider's address
 * before the provider knows the API's: the provider's port is chosen first.
 */
export async function startWhatsAppStack(
  db: Database,
  url: string,
  temporal: TestTemporal,
  options: {
    worker?: boolean;
    /** SIMULATORS of the API and the worker; the tests' billed by default (docs/configuration.md#simulators). */
    simulators?: SimulatorsSetting;
  } = {},
): Promise<WhatsAppStack> {
  const port = await freePort();
  const provider = createSimulatedWhatsAppClient({ baseUrl: `http://127.0.0.1:${port}` });
  const api = await startTestApi({
    db,
    url,
    temporal,
    whatsapp: { provider, appSecret: TEST_WHATSAPP_APP_SECRET },
    simulators: options.simulators,
  });
  const whatsapp = await startTestWhatsApp(db, { webhookUrl: `${api.baseUrl}/whatsapp/webhook`, port });
  if (options.worker ?? true) {
    const carrier = await startTestCarrier(db);
    await startTestWorker(temporal.taskQueue, {
      db,
      ...carrierDependencies(carrier, api),
      whatsappProvider: whatsapp.client,
      simulators: options.simulators,
    });
  }
  return { api, whatsapp };
}

/** A connected sender of the workspace (as the operator's CLI connects one): its id and phone_number_id. */
export async function connectedSender(db: Database, workspace: TestWorkspace, e164: string) {
  const { id } = await connectWhatsAppSender(db, { workspaceId: workspace.workspaceId, e164, provider: 'simulated' });
  return db.whatsAppSender.findUniqueOrThrow({ where: { id }, select: { id: true, phoneNumberId: true } });
}

/** A template created through the API and reviewed by the simulated provider (its name decides how); answers it once decided. */
export async function reviewedTemplate(
  api: RunningApi,
  workspace: TestWorkspace,
  template: { name: string; body: string; category?: string; language?: string },
) {
  const created = await api.request('POST', '/whatsapp/templates', {
    key: workspace.key,
    body: { language: 'en_US', category: 'utility', ...template },
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  return until(
    async () =>
      (await (await api.request('GET', `/whatsapp/templates/${id}`, { key: workspace.key })).json()) as {
        id: string;
        status: string;
        variableCount: number;
      },
    (row) => row.status !== 'PENDING',
  );
}
