/**
 * What a problem reported on a call (POST /calls/{id}/issues) can be about, each with what it means: the
 * one list the route validates against, the OpenAPI description documents and docs/features/calls.md#calls
 * repeats.
 */
export const CALL_ISSUE_CATEGORIES = {
  wrong_outcome: 'The recorded outcome is not what happened (e.g. answered recorded as no-answer, voicemail as human).',
  transcript_error: 'The transcript misses, garbles or misattributes what was said.',
  extraction_error: "A field of the call intelligence's extraction is wrong or missing.",
  evaluation_error: "The call intelligence's evaluation (score or reasons) is wrong.",
  audio_quality: 'The line or the agent voice was hard to hear: noise, silence, echo, cut-offs.',
  agent_behaviour:
    'The agent said something wrong, off-script or rude, interrupted, or did not follow its instructions.',
  compliance: 'The call broke a rule: calling hours, Do Not Call, consent, disclosure.',
  other: 'Anything else; a note saying what is required.',
} as const;

export type CallIssueCategory = keyof typeof CALL_ISSUE_CATEGORIES;

export const CALL_ISSUE_CATEGORY_NAMES = Object.keys(CALL_ISSUE_CATEGORIES) as [
  CallIssueCategory,
  ...CallIssueCategory[],
];

/** Categories whose issue must carry a non-blank note: "other" alone says nothing. */
export const CATEGORIES_NEEDING_A_NOTE: readonly CallIssueCategory[] = ['other'];

export const CALL_ISSUE_LIMITS = {
  /** Characters (Unicode code points) of a note. */
  noteLength: 2_000,
  /** Issues one call may hold: they are listed whole on the call (GET /calls/{id}), so the list stays small. */
  issuesPerCall: 100,
} as const;
