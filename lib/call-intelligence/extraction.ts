import type { Transcript } from '../calls/transcript';

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
