import type { Client } from '@temporalio/client';
import type { Principal } from '../../api/auth/principal';
import type { AppServices } from '../../api/services';
import { placeTestCall } from '../../api/services/test-calls';
import type { Database } from '../../lib/database';
import { VOICES } from '../../lib/voices';
import { testCallWorkflowId } from '../../lib/workflow-ids';
import { addMember, createWorkspace } from '../../lib/workspace-admin';

/** A test call placed as POST /calls/test places it, answered by a person: dialed, ended by its event, its intelligence started. */
export const testCallScenario = {
  name: 'test-call-answered',
  async run({ db, client, taskQueue }: { db: Database; client: Client; taskQueue: string }): Promise<string> {
    const { id: workspaceId } = await createWorkspace(db, 'Replay test call', {});
    await addMember(db, workspaceId, 'test-call@replay.localhost', 'owner');
    const agent = await db.agent.create({
      data: {
        workspaceId,
        name: 'Ana',
        language: 'en-US',
        voiceId: VOICES[0]!.id,
        script: { openingLine: 'Hi {{name}}, this is Ana.', questions: ['How many seats?'], closing: 'Bye.' },
        extractionFields: [{ name: 'seats', type: 'number', description: '' }],
      },
    });
    const services = { db, temporal: client, taskQueue } as unknown as AppServices;
    const { callId } = await placeTestCall(
      services,
      { workspaceId } as Principal,
      { agentId: agent.id, to: '+14155550120', lead: { name: 'Maria', fields: { seats: 7 } } },
      undefined,
    );
    const workflowId = testCallWorkflowId(callId);
    await client.workflow.getHandle(workflowId).result();
    return workflowId;
  },
};
