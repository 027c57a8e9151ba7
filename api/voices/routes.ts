import { z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import { VOICES } from '../../lib/voices/voices';
import { defineRoute, type RouteDefinition } from '../http/route';
import { defaultVoicePreviews } from './voice-previews';

const access = { permission: 'agents.view' } as const;

const voiceSchema = z.object({
  id: z
    .string()
    .describe('`<provider>/<voice>`: stable. May hold `/`, spaces and non-ASCII letters: URL-encode it in a path.'),
  name: z.string(),
  language: z.string().describe('BCP 47 tag of the language the voice speaks.'),
  provider: z
    .enum(['espeak-ng', 'simulated'])
    .describe(
      '`espeak-ng`: the embedded speech synthesiser, with previews. `simulated`: the voice of simulated calls, without a preview (501).',
    ),
});

const PREVIEW_SUMMARY =
  "A short MP3 of the voice saying a fixed sentence in its language (scope agents.view, on both paths: hearing a voice is part of viewing an agent's configuration). " +
  'Made on the first request by the synthesiser the deployment names (VOICE_PREVIEW_SYNTHESIZER: Amazon Polly, the voices calls speak with, or the embedded espeak-ng, the offline development default), said in the X-Preview-Synthesizer header (amazon-polly, polly-twin or espeak-ng); then served from a cache keyed by voice, text and synthesiser version, which survives restarts. A failing Polly is 502, never an espeak-ng preview.';

const previewRoute = (path: string): RouteDefinition =>
  defineRoute({
    method: 'get',
    path,
    access,
    summary: PREVIEW_SUMMARY,
    tags: ['Voices'],
    params: z.object({ id: z.string().describe('A voice id of GET /voices, URL-encoded.') }),
    responses: {
      200: {
        description: 'The preview: an MP3 (binary); X-Preview-Synthesizer names who made it.',
        contentType: 'audio/mpeg',
        schema: z.string(),
        headers: ['X-Preview-Synthesizer'],
      },
    },
    errors: {
      404: [ErrorCode.voice_not_found],
      501: [ErrorCode.preview_not_supported],
      502: [ErrorCode.provider_error],
    },
    handler: async ({ services, params, res }) => {
      const file = await (services.voicePreviews ?? defaultVoicePreviews()).fileOf(params.id);
      await new Promise<void>((resolve, reject) =>
        res.sendFile(
          file.path,
          {
            headers: {
              'Content-Type': 'audio/mpeg',
              'Cache-Control': 'private, max-age=86400',
              'X-Preview-Synthesizer': file.synthesizer,
            },
            // Always the whole file with 200: no ranges, no conditional answers (not declared).
            acceptRanges: false,
            lastModified: false,
            cacheControl: false,
            // The default cache directory is .data/voice-previews: send refuses paths through dot-folders otherwise.
            dotfiles: 'allow',
          },
          (error) => (error ? reject(error) : resolve()),
        ),
      );
      return { status: 200 };
    },
  });

export const voiceRoutes = [
  defineRoute({
    method: 'get',
    path: '/voices',
    access,
    summary:
      'The voices the workspace may use, all at once (unpaginated): a fixed catalogue shared by every workspace, listed in docs/features/voices.md.',
    tags: ['Voices'],
    responses: { 200: { description: 'Every voice.', schema: z.array(voiceSchema) } },
    handler: async () => ({
      status: 200,
      body: VOICES.map(({ id, name, language, provider }) => ({ id, name, language, provider })),
    }),
  }),
  previewRoute('/v1/voices/{id}/preview'),
  previewRoute('/voices/{id}/preview'),
];
