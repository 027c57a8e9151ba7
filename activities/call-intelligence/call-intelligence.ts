import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { Prisma } from '../../generated/prisma/client';
import type { CallEvaluation } from '../../lib/call-intelligence/call-evaluation';
import {
  callIntelligenceSchema,
  type CallIntelligence,
  type IntelligenceFallback,
} from '../../lib/call-intelligence/call-intelligence';
import { transcriptSchema, type Transcript } from '../../lib/calls/transcript';
import { ErrorCode } from '../../lib/error-codes';
import type { Database } from '../../lib/database';
import type { Carrier } from '../../lib/calls/carrier';
import type {
  CallIntelligenceModel,
  Extraction,
  ExtractionFieldSpec,
  ExtractionProvider,
} from '../../lib/call-intelligence/extraction';
import { ModelIntelligenceFailure } from '../../lib/call-intelligence/model-intelligence';
import { ruleBasedExtraction } from '../../lib/call-intelligence/rule-based-extraction';
import { listOnDoNotCall } from '../../lib/leads/do-not-call';
import { personNumberOf } from '../../lib/calls/person-number';
import { tellLaddersOfOptOut } from '../../lib/temporal/do-not-call';
import { log } from '../../lib/log';
import { knownRedactions } from '../../lib/compliance/compliance-store';
import { CpuBudgetExceeded, sharedCpuBudget, type CpuBudget } from '../../lib/cpu-budget/cpu-budget';
import type { BoundActivities } from '../bind-activities';
import type { CpuTaskInput, CpuTaskName, CpuTaskOutput } from '../../lib/cpu-budget/tasks';

export interface CallIntelligenceDependencies {
  db: Database;
  /** The carrier the call was placed through, asked for the transcript when the call has none stored. */
  calls: Carrier;
  /** Fills the agent's extraction fields; default the embedded `rule-based` extractor. */
  extraction?: ExtractionProvider;
  /**
   * A model that extracts and evaluates (INTELLIGENCE_PROVIDER openai-compatible or openai-twin); unset: the rules
   * alone. A call it fails for gets the rules' result, recorded with the reason.
   */
  callIntelligenceModel?: CallIntelligenceModel;
  /**
   * The threads the rules and the redaction of a fetched transcript run in, within a time budget (docs/cpu-budget.md);
   * default the process's shared ones with the default settings.
   */
  cpuBudget?: CpuBudget;
  /** Tells the ladders of a number the opt-out rule listed (lib/temporal/do-not-call.ts); unset: none is told. */
  temporal?: Client;
}

/** What extractCallFields answers the workflow, and storeCallIntelligence is given back (recorded in the history once). */
export interface ExtractedIntelligence {
  extraction: Extraction;
  provider: string;
  /** The model's evaluation; absent: storeCallIntelligence evaluates by the rules. */
  evaluation?: CallEvaluation;
  /** The model failed and the rules filled the call. */
  fallback?: IntelligenceFallback;
}

type AgentScript = { openingLine: string; questions: readonly string[]; closing: string } | null;

const failure = (type: ErrorCode, message: string, nonRetryable: boolean) =>
  ApplicationFailure.create({ type, message, nonRetryable });

/**
 * A step over the call's text in a CPU budget thread. Past its budget the call's data is too costly for the rules,
 * now and at every retry: a non-retryable cpu_budget_exceeded, so the job ends and the call keeps no intelligence
 * (null, as for a call not computed) instead of moving from worker to worker.
 */
async function withinBudget<Name extends CpuTaskName>(
  { cpuBudget = sharedCpuBudget() }: Pick<CallIntelligenceDependencies, 'cpuBudget'>,
  callId: string,
  task: Name,
  input: CpuTaskInput<Name>,
): Promise<CpuTaskOutput<Name>> {
  try {
    return await cpuBudget.run(task, input);
  } catch (error) {
    if (!(error instanceof CpuBudgetExceeded)) throw error;
    log.warn({ callId, task, budgetMs: error.budgetMs }, 'call intelligence: a step overran its CPU budget');
    throw failure(ErrorCode.cpu_budget_exceeded, `call ${callId}: ${error.message}`, true);
  }
}

async function loadCall({ db }: Pick<CallIntelligenceDependencies, 'db'>, callId: string) {
  const call = await db.call.findUnique({ where: { id: callId }, include: { lead: true } });
  if (!call) throw failure(ErrorCode.call_not_found, `no call ${callId}`, true);
  return call;
}

/** The agent the call was placed with (deleted ones too: the call still happened), else its campaign's. */
async function agentOf(
  { db }: Pick<CallIntelligenceDependencies, 'db'>,
  call: { agentId: string | null; campaignId: string | null },
) {
  const agentId =
    call.agentId ??
    (call.campaignId === null
      ? null
      : (await db.campaign.findUnique({ where: { id: call.campaignId }, select: { agentId: true } }))?.agentId);
  return agentId ? db.agent.findUnique({ where: { id: agentId } }) : null;
}

/**
 * Makes sure the call has its transcript: a stored one is kept, otherwise the carrier is asked for
 * it and it is stored, redacted by the workspace's rules (docs/features/compliance.md#redaction). A call the carrier has no transcript for (yet) fails with
 * call_has_no_transcript: retryable while the carrier may still make one, not when the call never
 * reached the carrier.
 */
export async function ensureCallTranscript(
  dependencies: Pick<CallIntelligenceDependencies, 'db' | 'calls' | 'cpuBudget'>,
  { callId }: { callId: string },
): Promise<{ turns: number }> {
  const { db, calls } = dependencies;
  const call = await loadCall(dependencies, callId);
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
  const parsed = await withinBudget(dependencies, callId, 'redactTurns', {
    turns: transcriptSchema.parse(transcript),
    settings: { redactions: knownRedactions(settings?.redactions) },
  });
  // Only where none is stored: a transcript written meanwhile (the carrier's own path) stays.
  await db.call.updateMany({
    where: { id: callId, transcript: { equals: Prisma.DbNull } },
    data: { transcript: parsed },
  });
  return { turns: parsed.length };
}

/**
 * The agent's extraction fields filled from the transcript: by the model when one is configured (with its
 * evaluation), else by the extraction provider. A model that fails (timeout, HTTP error, an answer that does not
 * validate) is not retried: the rules fill the call, and the fallback says why. The answer is the activity's
 * result, recorded once in the workflow's history, so that storeCallIntelligence stores it as it was.
 */
export async function extractCallFields(
  dependencies: CallIntelligenceDependencies,
  { callId }: { callId: string },
): Promise<ExtractedIntelligence> {
  const { extraction = ruleBasedExtraction, callIntelligenceModel } = dependencies;
  const call = await loadCall(dependencies, callId);
  const transcript = storedTranscript(callId, call.transcript);
  const agent = await agentOf(dependencies, call);
  const fields = (agent?.extractionFields ?? []) as unknown as ExtractionFieldSpec[];
  const request = { fields, transcript, language: agent?.language ?? 'en' };
  let fallback: IntelligenceFallback | undefined;
  if (callIntelligenceModel)
    try {
      const analysis = await callIntelligenceModel.analyse({
        ...request,
        script: (agent?.script ?? null) as AgentScript,
        answeredBy: call.answeredBy,
        durationMs: call.durationMs,
      });
      return { ...analysis, provider: callIntelligenceModel.name };
    } catch (error) {
      fallback =
        error instanceof ModelIntelligenceFailure
          ? { from: callIntelligenceModel.name, reason: error.reason, detail: error.detail }
          : { from: callIntelligenceModel.name, reason: 'error', detail: 'the model provider failed' };
      if (!(error instanceof ModelIntelligenceFailure))
        log.error({ err: error, callId }, 'call intelligence: the model provider threw');
      log.warn({ callId, ...fallback }, 'call intelligence: the model failed; the rules fill this call');
    }
  // The embedded rules run in a budget thread; another provider (a model's client) does its own I/O here.
  const values =
    extraction === ruleBasedExtraction
      ? await withinBudget(dependencies, callId, 'extractByRules', { fields, transcript })
      : await extraction.extract(request);
  return { extraction: values, provider: extraction.name, ...(fallback && { fallback }) };
}

/**
 * Stores the intelligence on the call: the model's evaluation when extractCallFields had one, else the rules'
 * (lib/call-intelligence/call-evaluation.ts), and the opt-out rule's finding (lib/call-intelligence/opt-out.ts), which
 * lists a campaign call's number on the workspace's Do-Not-Call list; a repeat writes the same.
 */
export async function storeCallIntelligence(
  dependencies: Pick<CallIntelligenceDependencies, 'db' | 'cpuBudget' | 'temporal'>,
  {
    callId,
    extraction: values,
    provider,
    evaluation: modelEvaluation,
    fallback,
    computedAt,
    jobId,
  }: ExtractedIntelligence & {
    callId: string;
    /** The workflow's time, so that a retried activity stores the same value. */
    computedAt: string;
    /** The workflow computing it, so that a re-run's caller can tell its result is in. */
    jobId: string;
  },
): Promise<{ score: number }> {
  const call = await loadCall(dependencies, callId);
  const transcript = storedTranscript(callId, call.transcript);
  const agent = await agentOf(dependencies, call);
  const fields = (agent?.extractionFields ?? []) as unknown as ExtractionFieldSpec[];
  const evaluation =
    modelEvaluation ??
    (await withinBudget(dependencies, callId, 'evaluateCall', {
      script: (agent?.script ?? null) as AgentScript,
      fieldNames: fields.map((field) => field.name),
      transcript,
      extracted: Object.fromEntries(Object.entries(values).map(([name, value]) => [name, value.value])),
      answeredBy: call.answeredBy,
      durationMs: call.durationMs,
    }));
  const optOut = await withinBudget(dependencies, callId, 'optOutHeard', { transcript });
  const intelligence: CallIntelligence = callIntelligenceSchema.parse({
    extraction: values,
    evaluation,
    provider,
    ...(fallback && { fallback }),
    ...(optOut && { optOut }),
    computedAt,
    jobId,
  });
  await dependencies.db.call.update({ where: { id: callId }, data: { intelligence } });
  // The opt-out rule lists a campaign call's number; a test call's is never listed (as its opt_out tool lists none).
  const phone = personNumberOf(call);
  if (optOut && call.kind !== 'test' && phone) {
    const listing = { workspaceId: call.workspaceId, phone, source: 'call_intelligence', callId } as const;
    // Its leads waiting for a later attempt end now (docs/features/dial-ladder.md#an-opt-out-ends-the-wait).
    if ((await listOnDoNotCall(dependencies.db.sql, listing)) && dependencies.temporal)
      await tellLaddersOfOptOut(dependencies.temporal, dependencies.db.sql, {
        workspaceId: call.workspaceId,
        phones: [phone],
      });
  }
  return { score: evaluation.score };
}

function storedTranscript(callId: string, value: unknown): Transcript {
  const parsed = transcriptSchema.safeParse(value);
  if (value === null || !parsed.success)
    throw failure(ErrorCode.call_has_no_transcript, `call ${callId} has no stored transcript`, true);
  return parsed.data;
}

/** The activities of callIntelligenceWorkflow (workflows/call-intelligence/call-intelligence.ts), as it calls them. */
export type CallIntelligenceActivities = BoundActivities<{
  ensureCallTranscript: typeof ensureCallTranscript;
  extractCallFields: typeof extractCallFields;
  storeCallIntelligence: typeof storeCallIntelligence;
}>;
