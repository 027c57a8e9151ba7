import { ApplicationFailure } from '@temporalio/common';
import { Prisma } from '../../generated/prisma/client';
import { evaluateCall } from '../../lib/call-intelligence/call-evaluation';
import { callIntelligenceSchema, type CallIntelligence } from '../../lib/call-intelligence/call-intelligence';
import { transcriptSchema, type Transcript } from '../../lib/calls/transcript';
import { ErrorCode } from '../../lib/error-codes';
import type { Database } from '../../lib/database';
import type { Carrier } from '../../lib/calls/carrier';
import type { Extraction, ExtractionFieldSpec, ExtractionProvider } from '../../lib/call-intelligence/extraction';
import { ruleBasedExtraction } from '../../lib/call-intelligence/rule-based-extraction';
import { knownRedactions } from '../../lib/compliance/compliance-store';
import { redactTurns } from '../../lib/compliance/redaction';

export interface CallIntelligenceDependencies {
  db: Database;
  /** The carrier the call was placed through, asked for the transcript when the call has none stored. */
  calls: Carrier;
  /** Fills the agent's extraction fields; default the embedded `rule-based` extractor. */
  extraction?: ExtractionProvider;
}

const failure = (type: ErrorCode, message: string, nonRetryable: boolean) =>
  ApplicationFailure.create({ type, message, nonRetryable });

/** The activities of callIntelligenceWorkflow (workflows/call-intelligence/call-intelligence.ts). */
export function createCallIntelligenceActivities({
  db,
  calls,
  extraction = ruleBasedExtraction,
}: CallIntelligenceDependencies) {
  async function loadCall(callId: string) {
    const call = await db.call.findUnique({ where: { id: callId }, include: { lead: true } });
    if (!call) throw failure(ErrorCode.call_not_found, `no call ${callId}`, true);
    return call;
  }

  /** The agent the call was placed with (deleted ones too: the call still happened), else its campaign's. */
  async function agentOf(call: { agentId: string | null; campaignId: string | null }) {
    const agentId =
      call.agentId ??
      (call.campaignId === null
        ? null
        : (await db.campaign.findUnique({ where: { id: call.campaignId }, select: { agentId: true } }))?.agentId);
    return agentId ? db.agent.findUnique({ where: { id: agentId } }) : null;
  }

  return {
    /**
     * Makes sure the call has its transcript: a stored one is kept, otherwise the carrier is asked for
     * it and it is stored, redacted by the workspace's rules (docs/features/compliance.md#redaction). A call the carrier has no transcript for (yet) fails with
     * call_has_no_transcript: retryable while the carrier may still make one, not when the call never
     * reached the carrier.
     */
    async ensureCallTranscript({ callId }: { callId: string }): Promise<{ turns: number }> {
      const call = await loadCall(callId);
      const stored = transcriptSchema.safeParse(call.transcript);
      if (call.transcript !== null && stored.success) return { turns: stored.data.length };
      if (!call.providerCallId)
        throw failure(ErrorCode.call_has_no_transcript, `call ${callId} never reached the carrier`, true);
      const transcript = await calls.transcript(call.providerCallId);
      if (!transcript)
        throw failure(ErrorCode.call_has_no_transcript, `the carrier has no transcript of call ${callId}`, false);
      const settings = await db.complianceSettings.findUnique({
        where: { workspaceId: call.workspaceId },
        select: { redactions: true },
      });
      const parsed = redactTurns(transcriptSchema.parse(transcript), {
        redactions: knownRedactions(settings?.redactions),
      });
      // Only where none is stored: a transcript written meanwhile (the carrier's own path) stays.
      await db.call.updateMany({
        where: { id: callId, transcript: { equals: Prisma.DbNull } },
        data: { transcript: parsed },
      });
      return { turns: parsed.length };
    },

    /** The agent's extraction fields filled from the transcript by the extraction provider (which may be a model: its own retries). */
    async extractCallFields({ callId }: { callId: string }): Promise<{ extraction: Extraction; provider: string }> {
      const call = await loadCall(callId);
      const transcript = storedTranscript(callId, call.transcript);
      const agent = await agentOf(call);
      const fields = (agent?.extractionFields ?? []) as unknown as ExtractionFieldSpec[];
      const values = await extraction.extract({ fields, transcript, language: agent?.language ?? 'en' });
      return { extraction: values, provider: extraction.name };
    },

    /** Evaluates the call (lib/call-intelligence/call-evaluation.ts) and stores the intelligence on the call; a repeat writes the same. */
    async storeCallIntelligence({
      callId,
      extraction: values,
      provider,
      computedAt,
      jobId,
    }: {
      callId: string;
      extraction: Extraction;
      provider: string;
      /** The workflow's time, so that a retried activity stores the same value. */
      computedAt: string;
      /** The workflow computing it, so that a re-run's caller can tell its result is in. */
      jobId: string;
    }): Promise<{ score: number }> {
      const call = await loadCall(callId);
      const transcript = storedTranscript(callId, call.transcript);
      const agent = await agentOf(call);
      const fields = (agent?.extractionFields ?? []) as unknown as ExtractionFieldSpec[];
      const evaluation = evaluateCall({
        script: (agent?.script ?? null) as Parameters<typeof evaluateCall>[0]['script'],
        fieldNames: fields.map((field) => field.name),
        transcript,
        extracted: Object.fromEntries(Object.entries(values).map(([name, value]) => [name, value.value])),
        answeredBy: call.answeredBy,
        durationMs: call.durationMs,
      });
      const intelligence: CallIntelligence = callIntelligenceSchema.parse({
        extraction: values,
        evaluation,
        provider,
        computedAt,
        jobId,
      });
      await db.call.update({ where: { id: callId }, data: { intelligence } });
      return { score: evaluation.score };
    },
  };
}

function storedTranscript(callId: string, value: unknown): Transcript {
  const parsed = transcriptSchema.safeParse(value);
  if (value === null || !parsed.success)
    throw failure(ErrorCode.call_has_no_transcript, `call ${callId} has no stored transcript`, true);
  return parsed.data;
}

export type CallIntelligenceActivities = ReturnType<typeof createCallIntelligenceActivities>;
