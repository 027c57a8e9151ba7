import type { Transcript } from '../calls/transcript';
import type { CallEvaluation } from './call-evaluation';

/**
 * Call intelligence's extraction: the agent's extraction fields filled from a call's transcript. Shaped
 * like a language-model call (the fields with their descriptions, the transcript and its language in;
 * one value per field with a confidence and the words it came from out), so that a model-backed
 * provider can stand where the embedded rule-based one does (lib/call-intelligence/rule-based-extraction.ts).
 */
export interface ExtractionProvider {
  /** Recorded on the call's intelligence as `provider`. */
  readonly name: string;
  extract(request: ExtractionRequest): Promise<Extraction>;
}

export interface ExtractionRequest {
  fields: ReadonlyArray<ExtractionFieldSpec>;
  transcript: Transcript;
  /** BCP 47 tag of the conversation's language (the agent's). */
  language: string;
}

export interface ExtractionFieldSpec {
  name: string;
  type: string;
  description?: string;
  allowedValues?: readonly string[];
}

/** Every requested field by name: null where the transcript does not give it. */
export type Extraction = Record<string, ExtractedValue>;

export interface ExtractedValue {
  /** string, number, boolean, one of allowedValues (enum) or YYYY-MM-DD (date); null when not found. */
  value: string | number | boolean | null;
  /** 0 to 1: how sure the provider is (0 when value is null). */
  confidence: number;
  /** The lead's words the value was read from, or null. */
  evidence: string | null;
}

/**
 * A model that fills the fields and evaluates the call in one answer (lib/call-intelligence/model-intelligence.ts,
 * INTELLIGENCE_PROVIDER). It throws when it has no usable answer; the activity then falls back to the rules.
 */
export interface CallIntelligenceModel {
  /** Recorded on the call's intelligence as `provider`: openai-compatible, or openai-twin through the twin. */
  readonly name: string;
  analyse(request: CallAnalysisRequest): Promise<CallAnalysis>;
}

export interface CallAnalysisRequest extends ExtractionRequest {
  /** The agent's script (what the evaluation checks), or null for a call without one. */
  script: { openingLine: string; questions: readonly string[]; closing: string } | null;
  /** human, machine or unknown (null). */
  answeredBy: string | null;
  /** The talk time. */
  durationMs: number | null;
}

export interface CallAnalysis {
  extraction: Extraction;
  evaluation: CallEvaluation;
}
