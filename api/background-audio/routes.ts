import type { Request } from 'express';
import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { UPLOAD_LIMITS } from '../../lib/background-audio/uploads';
import { ErrorCode } from '../../lib/error-codes';
import { defineRoute } from '../http/route';
import {
  backgroundAudioContent,
  deleteBackgroundAudio,
  listBackgroundAudio,
  uploadBackgroundAudio,
} from './background-audio';

const tags = ['Background audio'];
const AUDIO_MEDIA_TYPES = ['audio/mpeg', 'audio/wav', 'audio/ogg', 'audio/flac'] as const;

const assetSchema = z.object({
  id: z.string().describe("`platform-<slug>` for the platform's assets; a UUID for the workspace's uploads."),
  slug: z.string(),
  label: z.string(),
  isPlatform: z.boolean(),
  durationSecs: z.number().describe('How long the audio plays, measured by decoding it with sox (milliseconds kept).'),
  previewUrl: z
    .string()
    .describe(
      'Absolute URL of GET /background-audio/{id}/audio on this API: the audio itself. It needs the same key (scope background_audio.view).',
    ),
});

const newAssetSchema = z.strictObject({
  slug: z
    .string()
    .check(atMostCodePoints(64))
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'lowercase letters and digits in words joined by single hyphens')
    .describe(
      "Unique in the workspace, platform assets' slugs included (409 background_audio_slug_taken): lowercase letters and digits, words joined by `-`, at most 64.",
    ),
  label: z.string().trim().min(1).check(atMostCodePoints(100)).describe('What people see: 1 to 100 characters.'),
  audio: z
    .base64()
    .check(atMostCodePoints(UPLOAD_LIMITS.maxBase64Chars))
    .describe(
      `The audio file in base64: WAV, MP3, Ogg Vorbis or FLAC (told by its content, not a name), at most ${UPLOAD_LIMITS.maxBytes} bytes (${UPLOAD_LIMITS.maxBase64Chars} characters), playing ${UPLOAD_LIMITS.minSecs} to ${UPLOAD_LIMITS.maxSecs} s. It is decoded with sox: what does not decode is refused (400 invalid_body, issue at audio).`,
    ),
});

const idParams = z.object({ id: z.string().describe('An id of GET /background-audio.') });

/** Absolute, like a lead's resultUrl: the address this request came to, so it works behind the same host. */
const previewUrlOf = (req: Request) => (id: string) =>
  `${req.protocol}://${req.get('host')}/background-audio/${encodeURIComponent(id)}/audio`;

export const backgroundAudioRoutes = [
  defineRoute({
    method: 'get',
    path: '/background-audio',
    access: { permission: 'background_audio.view' },
    summary:
      "The background audio assets the workspace may use, all at once (unpaginated, spec 4.17): the platform's ambient loops first, then the workspace's uploads, oldest first.",
    tags,
    responses: { 200: { description: 'Every asset.', schema: z.array(assetSchema) } },
    handler: async ({ services, principal, req }) => ({
      status: 200,
      body: await listBackgroundAudio(services, principal, previewUrlOf(req)),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/background-audio',
    access: { permission: 'background_audio.edit' },
    summary: `Upload an audio file as a background audio asset of the workspace: JSON with the file in base64. It is decoded to prove it is audio and to measure how long it plays. A workspace holds at most ${UPLOAD_LIMITS.perWorkspace} uploads (409 background_audio_limit_reached).`,
    tags,
    body: newAssetSchema,
    responses: { 201: { description: 'Stored.', schema: assetSchema } },
    errors: { 409: [ErrorCode.background_audio_slug_taken, ErrorCode.background_audio_limit_reached] },
    handler: async ({ services, principal, body, req }) => {
      const audio = Buffer.from(body.audio, 'base64');
      const stored = await uploadBackgroundAudio(services, principal, { ...body, audio });
      return { status: 201, body: { ...stored, previewUrl: previewUrlOf(req)(stored.id) } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/background-audio/{id}/audio',
    access: { permission: 'background_audio.view' },
    summary:
      "An asset's audio (its previewUrl), with its media type: MP3 for the platform's assets, an upload's own format for the workspace's.",
    tags,
    params: idParams,
    responses: {
      200: { description: 'The audio file (binary).', contentType: AUDIO_MEDIA_TYPES, schema: z.string() },
    },
    handler: async ({ services, principal, params, res }) => {
      const content = await backgroundAudioContent(services, principal, params.id);
      res.set({ 'Content-Type': content.mediaType, 'Cache-Control': 'private, max-age=86400' });
      if ('bytes' in content) {
        res.status(200).send(Buffer.from(content.bytes));
        return { status: 200 };
      }
      await new Promise<void>((resolve, reject) =>
        res.sendFile(
          content.file,
          // The whole file with 200, through the dot-folder of the default .data/background-audio.
          { acceptRanges: false, lastModified: false, cacheControl: false, dotfiles: 'allow' },
          (error) => (error ? reject(error) : resolve()),
        ),
      );
      return { status: 200 };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/background-audio/{id}',
    access: { permission: 'background_audio.delete' },
    summary:
      "Delete one of the workspace's uploads; every agent of the workspace using it goes back to silence in the same transaction. A platform asset cannot be deleted: 403 forbidden, as any id that is not an upload of the workspace.",
    tags,
    params: idParams,
    responses: { 204: { description: 'Deleted.' } },
    handler: async ({ services, principal, params }) => {
      await deleteBackgroundAudio(services, principal, params.id);
      return { status: 204 };
    },
  }),
];
