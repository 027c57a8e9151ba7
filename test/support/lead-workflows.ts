import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { leadWorkflowId } from '../../lib/temporal/workflow-ids';
import type { leadDialWorkflow } from '../../workflows/dial-ladder/legacy/lead-dial';
import type { RunningApi } from './api';

/**
 * The handle of a pushed lead's workflow once it exists. A push answers when the lead is stored; its
 * workflow is started from the stored row a moment later, so tests wait for it here.
 */
export async function startedLeadWorkflow(
  client: Client,
  campaignId: string,
  idempotencyKey: string,
  timeoutMs = 30_000,
): Promise<WorkflowHandle<typeof leadDialWorkflow>> {
  const handle = client.workflow.getHandle<typeof leadDialWorkflow>(leadWorkflowId(campaignId, idempotencyKey));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await handle.describe();
      return handle;
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** What a pushed lead's workflow returned. */
export async function leadResult(client: Client, campaignId: string, idempotencyKey: string) {
  return (await startedLeadWorkflow(client, campaignId, idempotencyKey)).result();
}

/**
 * Pushes one lead through the API (POST /v1/campaigns/{id}/leads, 202) and answers at once: its handle (a lead
 * queued for a line has no workflow until its line comes, so the handle may not answer yet) and a wait for its
 * workflow to exist.
 */
export async function pushLead(
  api: Pick<RunningApi, 'request'>,
  key: string,
  client: Client,
  campaignId: string,
  phone: string,
  lead: { name?: string } = {},
) {
  const idempotencyKey = randomUUID();
  const response = await api.request('POST', `/v1/campaigns/${campaignId}/leads`, {
    key,
    body: { lead: { phone, ...lead }, idempotencyKey },
  });
  if (response.status !== 202) throw new Error(`lead push answered ${response.status}: ${await response.text()}`);
  const { leadId } = (await response.json()) as { leadId: string };
  return {
    leadId,
    handle: client.workflow.getHandle<typeof leadDialWorkflow>(leadWorkflowId(campaignId, idempotencyKey)),
    started: (timeoutMs?: number) => startedLeadWorkflow(client, campaignId, idempotencyKey, timeoutMs),
  };
}

/** Pushes one lead through the API and answers it with its workflow, once that exists (its line handed to it). */
export async function pushLeadWithWorkflow(
  api: Pick<RunningApi, 'request'>,
  key: string,
  client: Client,
  campaignId: string,
  phone: string,
  lead: { name?: string } = {},
): Promise<{ leadId: string; handle: WorkflowHandle<typeof leadDialWorkflow> }> {
  const { leadId, started } = await pushLead(api, key, client, campaignId, phone, lead);
  return { leadId, handle: await started() };
}
