import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import type { Principal } from '../../api/door/principal';
import type { AppServices } from '../../api/app-services';
import { uploadSpeechCall } from '../../api/speech/speech-calls';
import { defaultSpeechTaskQueue } from '../../lib/config';
import { holdSpeechAnalysis } from '../../lib/credits/speech-billing';
import type { Database } from '../../lib/database';
import { prismaSql } from '../../lib/run-sql';
import { scorecardSchema } from '../../lib/speech/scorecard';
import type { SpeechAnalysisInput } from '../../lib/speech/speech-analysis';
import { speechAnalysisWorkflowId } from '../../lib/temporal/workflow-ids';
import { addMember, createWorkspace, grantCredits } from '../../lib/door/workspace-admin';
import type { speechAnalysisWorkflow } from '../../workflows/speech/speech-analysis';
import { makeSalesCallRecording } from '../support/sales-conversation';

const run = promisify(execFile);

/** The scripted sales call in FLAC (small enough for a JSON body), uploaded as POST /speech/calls uploads it. */
async function uploadSalesCall(services: AppServices, principal: Principal, dir: string) {
  const recording = await makeSalesCallRecording(dir);
  const flac = path.join(dir, 'sales-call.flac');
  await run('sox', ['-D', recording.wavPath, flac]);
  const { analysis } = await uploadSpeechCall(
    services,
    principal,
    { audio: await readFile(flac), language: 'en-US' },
    undefined,
  );
  return analysis.id;
}

/**
 * Bytes that are no recording, recorded and held for as the API records an upload but past its check (as
 * a recording damaged in storage would be), then the analysis started as the API starts it.
 */
async function recordBehindTheApi({ db, temporal, taskQueue }: AppServices, principal: Principal) {
  const id = randomUUID();
  const workflowId = speechAnalysisWorkflowId(id);
  await db.$transaction(async (tx) => {
    await tx.speechCall.create({
      data: {
        id,
        workspaceId: principal.workspaceId,
        language: 'en-US',
        mediaType: 'audio/wav',
        byteSize: 27,
        durationMs: 1000,
        scorecard: scorecardSchema.parse({}),
        workflowId,
        recording: { create: { audio: new Uint8Array(Buffer.from('RIFF0000WAVEnot a recording')) } },
      },
    });
    const actor = { type: 'api_key' as const, id: principal.keyId };
    await holdSpeechAnalysis(prismaSql(tx), { workspaceId: principal.workspaceId, speechCallId: id }, actor);
  });
  const input: SpeechAnalysisInput = {
    speechCallId: id,
    workspaceId: principal.workspaceId,
    taskQueue: defaultSpeechTaskQueue(taskQueue),
  };
  await temporal.workflow.start<typeof speechAnalysisWorkflow>('speechAnalysisWorkflow', {
    workflowId,
    taskQueue,
    args: [input],
  });
  return id;
}

/**
 * A recording's analysis, its speech activities on the queue derived from the task queue (as the
 * configuration derives it): the scripted sales call, uploaded as the API takes it, transcribed, scored
 * and charged; or bytes that are no recording, refused by the analysis (recording_not_audio), its hold voided.
 */
const speechAnalysisOf = (name: string, audio: 'sales-call' | 'not-audio') => ({
  name,
  async run({ db, client, taskQueue }: { db: Database; client: Client; taskQueue: string }): Promise<string> {
    const { id: workspaceId } = await createWorkspace(db, 'Replay speech analysis', {});
    await grantCredits(db, workspaceId, 10);
    await addMember(db, workspaceId, 'speech@replay.localhost', 'owner');
    const services = { db, temporal: client, taskQueue } as unknown as AppServices;
    const principal = { workspaceId, keyId: randomUUID() } as Principal;
    const dir = await mkdtemp(path.join(os.tmpdir(), 'replay-speech-'));
    try {
      const id =
        audio === 'sales-call'
          ? await uploadSalesCall(services, principal, dir)
          : await recordBehindTheApi(services, principal);
      const workflowId = speechAnalysisWorkflowId(id);
      await client.workflow.getHandle(workflowId).result();
      return workflowId;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
});

/** Transcribed, scored, its hold posted at the price of one analysis. */
export const completedSpeechAnalysisScenario = speechAnalysisOf('speech-analysis-completed', 'sales-call');
/** Refused by the analysis (recording_not_audio), its hold voided. */
export const failedSpeechAnalysisScenario = speechAnalysisOf('speech-analysis-not-audio', 'not-audio');
