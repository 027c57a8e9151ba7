import { z } from 'zod';
import { atLeastCodePoints, atMostCodePoints } from '../code-point-length';
import { findPlatformBackgroundAudio } from '../background-audio/platform-assets';
import { findVoice, VOICES, voiceSpeaks } from '../voices/voices';
import { e164PhoneSchema } from '../phone';
import { CONVERSATION_ENGINES } from '../conversation/conversation-engine';

/**
 * Limits of an agent's settings (docs/features/agents.md): generous for a phone script, small enough to keep a row
 * light.
 */
export const AGENT_LIMITS = {
  nameChars: 200,
  languageChars: 35,
  lineChars: 1000,
  /**
   * `{{` in one script line (docs/hostile-input.md): a line names a few of the lead's values; each placeholder is a
   * gap the call evaluation's line matching (saysLine) skips words over.
   */
  placeholdersPerLine: 20,
  /** A model's instructions (docs/features/conversation/relay.md): a prompt of a few pages at most. */
  instructionsChars: 20_000,
  questions: 50,
  extractionFields: 50,
  fieldNameChars: 64,
  fieldDescriptionChars: 1000,
  allowedValues: 100,
  allowedValueChars: 200,
  dictionaries: 20,
  documents: 100,
  /** Live agents of one workspace: the list is answered all at once. */
  agentsPerWorkspace: 200,
} as const;

const addIssue = (ctx: z.RefinementCtx, path: PropertyKey[], message: string, input: unknown) =>
  ctx.addIssue({ code: 'custom', path, message, input });

const isGuid = (id: string) => z.guid().safeParse(id).success;

/** A BCP 47 tag, stored in its canonical form (en-us -> en-US). */
export const languageSchema = z
  .string()
  .check(atLeastCodePoints(2), atMostCodePoints(AGENT_LIMITS.languageChars))
  .refine((tag) => canonicalLanguage(tag) !== null, { message: 'not a well-formed BCP 47 language tag (e.g. en-US)' })
  .transform((tag) => canonicalLanguage(tag)!)
  .describe('BCP 47 tag of the language the agent speaks (e.g. en-US); stored in its canonical form.');

export function canonicalLanguage(tag: string): string | null {
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}

export const voiceIdSchema = z
  .enum(VOICES.map((voice) => voice.id) as [string, ...string[]], { error: 'no voice of GET /voices has this id' })
  .describe('A voice id of GET /voices.');

const line = (min: number) =>
  z
    .string()
    .trim()
    .check(atLeastCodePoints(min), atMostCodePoints(AGENT_LIMITS.lineChars))
    .refine((text) => text.split('{{').length - 1 <= AGENT_LIMITS.placeholdersPerLine, {
      message: `at most ${AGENT_LIMITS.placeholdersPerLine} {{placeholders}} in a line`,
    });

export const scriptSchema = z
  .strictObject({
    openingLine: line(1).describe('What the agent says first.'),
    questions: z
      .array(line(1))
      .max(AGENT_LIMITS.questions)
      .default([])
      .describe(`The questions the agent asks, in order (at most ${AGENT_LIMITS.questions}).`),
    closing: line(0).default('').describe('What the agent says last ("" for nothing).'),
  })
  .describe(
    `The script the agent follows. Texts are trimmed; each is at most ${AGENT_LIMITS.lineChars} characters with at most ${AGENT_LIMITS.placeholdersPerLine} {{placeholders}}.`,
  );

export const EXTRACTION_FIELD_TYPES = ['string', 'number', 'boolean', 'enum', 'date'] as const;

const extractionFieldSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an identifier: a letter or _, then letters, digits or _')
      .check(atMostCodePoints(AGENT_LIMITS.fieldNameChars))
      .describe(
        'Identifier-like (letters, digits, _; not starting with a digit), unique within the agent ignoring case.',
      ),
    type: z.enum(EXTRACTION_FIELD_TYPES).describe('The type of value the field holds.'),
    description: z
      .string()
      .trim()
      .check(atMostCodePoints(AGENT_LIMITS.fieldDescriptionChars))
      .default('')
      .describe('What the field holds, as the agent is told.'),
    allowedValues: z
      .array(z.string().trim().min(1).check(atMostCodePoints(AGENT_LIMITS.allowedValueChars)))
      .min(1)
      .max(AGENT_LIMITS.allowedValues)
      .optional()
      .describe('enum only, and required there: the values the field may take (unique). Refused for other types.'),
  })
  .superRefine((field, ctx) => {
    if (field.type === 'enum' && !field.allowedValues)
      addIssue(ctx, ['allowedValues'], 'an enum field lists its allowedValues', undefined);
    if (field.type !== 'enum' && field.allowedValues)
      addIssue(ctx, ['allowedValues'], 'only an enum field has allowedValues', field.allowedValues);
    field.allowedValues?.forEach((value, index) => {
      if (field.allowedValues!.indexOf(value) !== index)
        addIssue(ctx, ['allowedValues', index], 'repeats an earlier value', value);
    });
  });

export type ExtractionField = z.output<typeof extractionFieldSchema>;

export const extractionFieldsSchema = z
  .array(extractionFieldSchema)
  .max(AGENT_LIMITS.extractionFields)
  .superRefine((fields, ctx) => {
    const seen = new Set<string>();
    fields.forEach((field, index) => {
      const key = field.name.toLowerCase();
      if (seen.has(key)) addIssue(ctx, [index, 'name'], 'another extraction field has this name', field.name);
      seen.add(key);
    });
  })
  .describe(
    `What the agent fills from a conversation (at most ${AGENT_LIMITS.extractionFields}); the call intelligence of its calls.`,
  );

/** Ids of rows of the workspace, in order, each once. Existence is checked by the service (400 naming the index). */
const uniqueIds = (max: number) =>
  z
    .array(z.guid('not a UUID'))
    .max(max)
    .superRefine((ids, ctx) =>
      ids.forEach((id, index) => {
        if (ids.findIndex((other) => other.toLowerCase() === id.toLowerCase()) !== index)
          addIssue(ctx, [index], 'repeats an earlier id', id);
      }),
    )
    .transform((ids) => ids.map((id) => id.toLowerCase()));

export const dictionaryIdsSchema = uniqueIds(AGENT_LIMITS.dictionaries).describe(
  `Dictionaries of the workspace the agent uses, in order (at most ${AGENT_LIMITS.dictionaries}, each once). Deleting a dictionary removes it here.`,
);

export const documentIdsSchema = uniqueIds(AGENT_LIMITS.documents).describe(
  `Knowledge-base documents of the workspace (at most ${AGENT_LIMITS.documents}, each once).`,
);

export const backgroundAudioIdSchema = z
  .string()
  .min(1)
  .check(atMostCodePoints(200))
  // An upload's id as PostgreSQL prints it, so that the stored id compares equal to the row's.
  .transform((id) => (isGuid(id) ? id.toLowerCase() : id))
  .nullable()
  .describe(
    'A background audio asset of GET /background-audio: a platform asset id or the id of one of the workspace uploads; null: silence.',
  );

/** A text setting of an agent: trimmed, 1 to `maxChars` characters, or null. */
const optionalText = (maxChars: number) => z.string().trim().min(1).check(atMostCodePoints(maxChars)).nullable();

export const voicemailMessageSchema = optionalText(AGENT_LIMITS.lineChars).describe(
  'What the agent leaves on an answering machine after its beep ({{name}} and {{<lead field>}} filled, as in the ' +
    'script), then hangs up: the call ends voicemail_left. null: no message (a machine is hung up on at its beep; ' +
    'the call ends voicemail). At most 1000 characters, trimmed.',
);

export const instructionsSchema = optionalText(AGENT_LIMITS.instructionsChars).describe(
  "The agent's instructions for a language model (its prompt): with a model configured (DIALOGUE_PROVIDER), a " +
    'ConversationRelay call of this agent is held by the model with them, its knowledge documents and the four ' +
    'tools. null: the script engine holds its calls. At most 20,000 characters, trimmed.',
);

export const firstMessageSchema = optionalText(AGENT_LIMITS.lineChars).describe(
  'What the agent says first in a ConversationRelay conversation, after its opening line (and any disclosure): ' +
    "null: the script's first question, or the model's own opening. At most 1000 characters, trimmed.",
);

export const transferNumberSchema = e164PhoneSchema
  .nullable()
  .describe(
    "Where transfer_to_human hands a call (E.164), from the call's own caller number; null: the agent cannot " +
      'transfer and offers a callback instead.',
  );

/** How transfer_to_human hands a call on (docs/features/conversation/tools.md#warm-transfer). */
export const TRANSFER_MODES = ['cold', 'warm'] as const;
export type TransferMode = (typeof TRANSFER_MODES)[number];

export const transferModeSchema = z
  .enum(TRANSFER_MODES)
  .describe(
    'How transfer_to_human hands a call to transferNumber (docs/features/conversation/tools.md#warm-transfer). cold ' +
      "(the default): the human's phone rings and they hear the lead at once. warm: the human's leg first hears a " +
      "summary of the call (the model's, or for the script engine one composed from the answers given, at most 600 " +
      'characters), then the lead is bridged to them. Either way, when nobody answers (busy, no answer, failed, or ' +
      'a warm leg hung up before the bridge) the lead hears that nobody could take the call.',
  );

export const conversationEngineSchema = z
  .enum(CONVERSATION_ENGINES)
  .describe(
    "How the agent's answered Twilio and Telnyx calls talk (docs/features/agents.md#conversation-engine). relay " +
      "(the default): the dialogue engine over the carrier's ConversationRelay, as in a web test session: the " +
      'script (or the model, with instructions and a model configured), answers from the knowledge documents, ' +
      "callbacks, transfers and opt-outs. gather: the script walk on the carrier's own speech recognition, each " +
      'question asked and its answer heard, nothing more (a fallback; a deployment may also ask for it for every ' +
      'agent, CONVERSATION_ENGINE=gather, which then wins).',
  );

/** A platform asset, or else an upload id to look up in the workspace; null: neither can it be. */
export function backgroundAudioReference(id: string): { platform: true } | { uploadId: string } | null {
  if (findPlatformBackgroundAudio(id)) return { platform: true };
  return isGuid(id) ? { uploadId: id } : null;
}

/** Settings an agent is created with; PATCH takes any of them, each replaced whole. */
export const agentSettings = {
  name: z
    .string()
    .trim()
    .min(1)
    .check(atMostCodePoints(AGENT_LIMITS.nameChars))
    .describe('1 to 200 characters once trimmed.'),
  language: languageSchema,
  voiceId: voiceIdSchema,
  script: scriptSchema,
  extractionFields: extractionFieldsSchema,
  dictionaryIds: dictionaryIdsSchema,
  backgroundAudioId: backgroundAudioIdSchema,
  voicemailMessage: voicemailMessageSchema,
  instructions: instructionsSchema,
  firstMessage: firstMessageSchema,
  transferNumber: transferNumberSchema,
  transferMode: transferModeSchema,
  conversationEngine: conversationEngineSchema,
};

/**
 * Why an agent may not speak `language` with `voiceId`, or null (docs/features/agents.md#voice-and-language): a voice
 * speaks its own language, and carriers refuse or mispronounce another, so a mismatch is refused, never reassigned.
 */
export function voiceLanguageMismatch(language: string, voiceId: string): string | null {
  const voice = findVoice(voiceId);
  if (!voice || voiceSpeaks(voice, language)) return null;
  return `the voice ${voiceId} speaks ${voice.language}, not the agent's language ${language}: choose a voice of GET /voices in ${language.split('-')[0]}`;
}

export const newAgentSchema = z
  .strictObject({
    ...agentSettings,
    extractionFields: agentSettings.extractionFields.default([]),
    dictionaryIds: agentSettings.dictionaryIds.default([]),
    backgroundAudioId: agentSettings.backgroundAudioId.default(null),
    voicemailMessage: agentSettings.voicemailMessage.default(null),
    instructions: agentSettings.instructions.default(null),
    firstMessage: agentSettings.firstMessage.default(null),
    transferNumber: agentSettings.transferNumber.default(null),
    transferMode: agentSettings.transferMode.default('cold'),
    conversationEngine: agentSettings.conversationEngine.default('relay'),
  })
  .superRefine((agent, ctx) => {
    const mismatch = voiceLanguageMismatch(agent.language, agent.voiceId);
    if (mismatch) addIssue(ctx, ['voiceId'], mismatch, agent.voiceId);
  });

export const agentUpdateSchema = z
  .strictObject(agentSettings)
  .partial()
  .refine((update) => Object.keys(update).length > 0, { message: 'give at least one setting to change' });

export type NewAgent = z.output<typeof newAgentSchema>;
export type AgentUpdate = z.output<typeof agentUpdateSchema>;
export type AgentScript = z.output<typeof scriptSchema>;
