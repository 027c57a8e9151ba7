/** What the analysis workflow of one uploaded recording is started with (workflows/speech/speech-analysis.ts). */
export interface SpeechAnalysisInput {
  speechCallId: string;
  /** Whose credits the analysis is billed to (known even once the analysis is deleted). */
  workspaceId: string;
  /**
   * SPEECH_TASK_QUEUE: where the workflow sends its activities, to the speech workers that run the
   * recogniser with their own slots (docs/features/speech.md).
   */
  taskQueue: string;
}

export type SpeechAnalysisResult =
  { status: 'completed'; totalScore: number } | { status: 'failed'; errorCode: string };

/** referenceType of an analysis's ledger entries: the SpeechCall's id is the referenceId. */
export const SPEECH_CALL_REFERENCE = 'speech_call';
