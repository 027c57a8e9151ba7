import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { simulatedConversation } from '../../simulators/simulated-carrier/conversation';
import { startCallIntelligence } from '../../lib/temporal/start-call-intelligence';
import type { Database } from '../../lib/database';
import { VOICES } from '../../lib/voices/voices';
import { addMember, createWorkspace } from '../../lib/door/workspace-admin';

/** The call intelligence of an answered call with a stored transcript: extracted, evaluated and stored. */
export const callIntelligenceScenario = {
  name: 'call-intelligence-computed',
  async run({ db, client, taskQueue }: { db: Database; client: Client; taskQueue: string }): Promise<string> {
    const { id: workspaceId } = await createWorkspace(db, 'Replay call intelligence', {});
    await addMember(db, workspaceId, 'call-intelligence@replay.localhost', 'owner');
    const script = { openingLine: 'Hi {{name}}, this is Ana.', questions: ['How many seats?'], closing: 'Bye.' };
    const extractionFields = [{ name: 'seats', type: 'number', description: '' }];
    const agent = await db.agent.create({
      data: { workspaceId, name: 'Ana', language: 'en-US', voiceId: VOICES[0]!.id, script, extractionFields },
    });
    const campaign = await db.campaign.create({ data: { workspaceId, name: 'call-intelligence' } });
    const lead = await db.lead.create({
      data: {
        workspaceId,
        campaignId: campaign.id,
        idempotencyKey: 'call-intelligence',
        phone: '+14155550120',
        name: 'Maria',
        fields: { seats: 7 },
        workflowId: `not-started-${randomUUID()}`,
        requestId: randomUUID(),
      },
    });
    const call = await db.call.create({
      data: {
        workspaceId,
        campaignId: campaign.id,
        leadId: lead.id,
        attempt: 1,
        attemptId: `${lead.id}:1`,
        provider: 'simulated',
        status: 'ended',
        outcome: 'answered',
        answeredBy: 'human',
        agentId: agent.id,
        durationMs: 30_000,
        startedAt: new Date(),
        endedAt: new Date(),
        transcript: simulatedConversation({
          agent: { script, extractionFields, language: 'en-US' },
          lead: { name: 'Maria', fields: { seats: 7 } },
          answeredBy: 'human',
          durationMs: 30_000,
          seed: 'replay',
        }),
      },
    });
    const { workflowId } = await startCallIntelligence(client, taskQueue, call.id);
    await client.workflow.getHandle(workflowId).result();
    return workflowId;
  },
};
