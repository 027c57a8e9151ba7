import { z } from 'zod';
import { languageSchema } from '../../lib/agents/agent-definition';
import { transcriptSchema } from '../../lib/calls/transcript';
import { ErrorCode } from '../../lib/error-codes';
import { defineRoute } from '../http/route';
import { DEFAULT_SOURCE_LANGUAGE, translateCallTranscript } from './call-translations';

const translationSchema = z.object({
  callId: z.string(),
  language: z
    .string()
    .describe(
      'The target language as the installed pair names it (BCP 47): `es` for a request of `es-MX` where only `es` is installed.',
    ),
  sourceLanguage: z.string().describe('The language translated from, as the installed pair names it (BCP 47).'),
  provider: z
    .string()
    .describe(
      'The translator that made it: the engine and its version, the language data and its Debian package version (e.g. `apertium 3.8.3 eng-spa (apertium-eng-spa 0.8.1-2)`).',
    ),
  turns: transcriptSchema.describe(
    "The call's transcript, turn for turn (speaker and offsetMs as they are), with each text translated.",
  ),
  createdAt: z.string().describe('When the translation was made and stored.'),
});

export const callTranslationRoutes = [
  defineRoute({
    method: 'post',
    path: '/calls/{id}/transcript-translation',
    // Spec section 5, "Stricter scopes for keys": calls.view for members, calls.edit for keys.
    access: { permission: 'calls.edit' },
    summary:
      "The call's transcript translated into a language by the embedded translator (Debian's apertium, with the language pairs installed). Made on the first request for a language and stored; later requests for the same call and language answer the stored translation.",
    tags: ['Calls'],
    params: z.object({ id: z.string().describe('A call id of GET /calls.') }),
    body: z.strictObject({
      language: languageSchema.describe(
        'The target language: a BCP 47 tag (e.g. `es`); its primary language decides where no pair names the region.',
      ),
      sourceLanguage: languageSchema
        .optional()
        .describe(
          `The transcript's language; default: the language of the call's agent, else \`${DEFAULT_SOURCE_LANGUAGE}\`. Ignored once a translation into \`language\` is stored (it is answered as it is).`,
        ),
    }),
    responses: { 200: { description: 'The translation (made now, or stored before).', schema: translationSchema } },
    errors: {
      409: [ErrorCode.call_has_no_transcript],
      422: [ErrorCode.translation_pair_unsupported],
      502: [ErrorCode.provider_error],
    },
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: await translateCallTranscript(services, principal, params.id, body),
    }),
  }),
];
