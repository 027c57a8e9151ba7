import type { Client } from '@temporalio/client';
import type { Principal } from '../../api/door/principal';
import type { AppServices } from '../../api/app-services';
import { placeTestCall } from '../../api/test-calls/test-calls';
import type { Database } from '../../lib/database';
import { VOICES } from '../../lib/voices/voices';
import { testCallWorkflowId } from '../../lib/temporal/workflow-ids';
import { addMember, createWorkspace, grantCredits } from '../../lib/door/workspace-admin';

/**
 * A test call placed as POST /calls/test places it (its credit hold taken), to `to`: answered by a person
 * (dialed, ended by its event, billed, its intelligence started) or busy (the hold voided).
 */
const testCallTo = (name: string, to: string) => ({
  name,
  async run({ db, client, taskQueue }: { db: Database; client: Client; taskQueue: string }): Promise<string> {
    const { id: workspaceId } = await createWorkspace(db, 'Replay test call', {});
    await grantCredits(db, workspaceId, 10);
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
      { workspaceId, keyId: 'replay' } as Principal,
      { agentId: agent.id, to, lead: { name: 'Maria', fields: { seats: 7 } } },
      undefined,
    );
    const workflowId = testCallWorkflowId(callId);
    await client.workflow.getHandle(workflowId).result();
    return workflowId;
  },
});

/**
 * Billing (patch 'test-call-billing', retired: test-call-answered, recorded before it, went with its old branch): the
 * hold posted by the call's started minute, before its intelligence.
 */
export const billedTestCallScenario = testCallTo('test-call-billed-answered', '+14155550120');
/** Billing: a busy number, never connected, its hold voided. */
export const voidedTestCallScenario = testCallTo('test-call-billed-busy', '+14155550125');
