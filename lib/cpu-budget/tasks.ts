import { evaluateCall, type CallEvaluation, type EvaluationInput } from '../call-intelligence/call-evaluation';
import type { Extraction, ExtractionFieldSpec } from '../call-intelligence/extraction';
import { optOutHeard } from '../call-intelligence/opt-out';
import { extractByRules } from '../call-intelligence/rule-based-extraction';
import type { Transcript } from '../calls/transcript';
import { redactTurns, type RedactionSettings } from '../compliance/redaction';

/**
 * The pure CPU steps over tenant text that the worker runs off its main thread, within a time budget
 * (docs/cpu-budget.md). Each takes and answers plain data (it crosses threads by structured clone) and does no I/O.
 * A name here is what a caller asks the pool for (lib/cpu-budget/cpu-budget.ts); the thread imports this table.
 */
export const CPU_TASKS = {
  /** The rules' evaluation of a call (lib/call-intelligence/call-evaluation.ts: script lines matched in the turns). */
  evaluateCall: (input: EvaluationInput): CallEvaluation => evaluateCall(input),
  /** The rules' extraction (lib/call-intelligence/rule-based-extraction.ts). */
  extractByRules: ({ fields, transcript }: { fields: ExtractionFieldSpec[]; transcript: Transcript }): Extraction =>
    extractByRules(fields, transcript),
  /** The call intelligence's opt-out rule (lib/call-intelligence/opt-out.ts): the lead's first turn asking not to be called. */
  optOutHeard: ({ transcript }: { transcript: Transcript }): { evidence: string } | null => optOutHeard(transcript),
  /** A fetched transcript redacted by the workspace's rules (lib/compliance/redaction.ts). */
  redactTurns: ({ turns, settings }: { turns: Transcript; settings: RedactionSettings }): Transcript =>
    redactTurns(turns, settings),
} as const;

export type CpuTaskName = keyof typeof CPU_TASKS;
export type CpuTaskInput<Name extends CpuTaskName> = Parameters<(typeof CPU_TASKS)[Name]>[0];
export type CpuTaskOutput<Name extends CpuTaskName> = ReturnType<(typeof CPU_TASKS)[Name]>;
