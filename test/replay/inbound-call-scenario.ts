import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { endCall } from '../../lib/calls/call-lines';
import type { Database } from '../../lib/database';
import { addMember, createWorkspace } from '../../lib/door/workspace-admin';
import { signalCallEnded, startInboundCallWorkflow } from '../../lib/temporal/calls';
import { inboundCallWorkflowId } from '../../lib/temporal/workflow-ids';

/**
 * An inbound call from an unknown number, recorded as the API records it (api/carriers/inbound-call-store.ts), watched
 * by its workflow (workflows/calls/inbound-call.ts) and ended by its carrier's end event, signalled as the event route
 * signals it (the line dropped: failed, which has no intelligence to start); then its aftermath. The call is the simulated
 * carrier's here: its end comes as the event, never a lookup.
 */
export const inboundCallEndedByItsEvent = {
  name: 'inbound-call-ended-by-its-event',
  async run({ db, client, taskQueue }: { db: Database; client: Client; taskQueue: string }): Promise<string> {
    const { id: workspaceId } = await createWorkspace(db, 'Replay inbound call', {});
    await addMember(db, workspaceId, 'inbound@replay.localhost', 'owner');
    const providerCallId = `CA${randomBytes(16).toString('hex')}`;
    const attemptId = `inbound:${providerCallId}`;
    const workflowId = inboundCallWorkflowId(attemptId);
    await db.call.create({
      data: {
        workspaceId,
        kind: 'inbound',
        direction: 'inbound',
        attempt: 1,
        attemptId,
        provider: 'simulated',
        status: 'dialing',
        providerCallId,
        fromNumber: '+14155561401',
        toNumber: '+14155569401',
        workflowId,
        startedAt: new Date(),
      },
    });
    await startInboundCallWorkflow(client, taskQueue, { attemptId, workspaceId });
    const ended = await endCall(db, attemptId, { providerCallId, outcome: 'failed', durationMs: null });
    await signalCallEnded(client, workflowId, { attemptId, callId: ended.id, outcome: 'failed', durationMs: null });
    await client.workflow.getHandle(workflowId).result();
    return workflowId;
  },
};
