import { createHash } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { isUniqueViolation } from '../../lib/prisma-errors';
import {
  findPlatformBackgroundAudio,
  PLATFORM_AUDIO_MEDIA_TYPE,
  PLATFORM_BACKGROUND_AUDIO,
} from '../../lib/background-audio/platform-assets';
import { createPlatformAudio } from '../../lib/background-audio/platform-files';
import type { BackgroundAudioTools } from '../../lib/background-audio/platform-files';
import { AudioRefused, measureUpload, UPLOAD_LIMITS } from '../../lib/background-audio/uploads';
import { configVariables, type Config } from '../../lib/config';
import { ErrorCode } from '../../lib/error-codes';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { createWithinQuota } from '../campaigns/workspace-quota';
import {
  deleteUpload,
  insertUpload,
  uploadAudioWhere,
  uploadCount,
  uploadIdWhere,
  uploadsOfWorkspace,
} from './background-audio-store';

/** The spec's background audio asset (section 2). */
export interface BackgroundAudioAsset {
  id: string;
  slug: string;
  label: string;
  isPlatform: boolean;
  durationSecs: number;
  previewUrl: string;
}

export interface NewBackgroundAudio {
  slug: string;
  label: string;
  /** The audio file's bytes (the body's base64 decoded). */
  audio: Buffer;
}

/** What GET /background-audio/{id}/audio answers: a platform file, or an upload's stored bytes. */
export type BackgroundAudioContent = { mediaType: string } & ({ file: string } | { bytes: Uint8Array });

type AudioConfig = Pick<Config, 'BACKGROUND_AUDIO_DIR' | 'SOX_PATH' | 'AUDIO_DECODE_TIMEOUT_MS'>;

export function backgroundAudioFromConfig(config: AudioConfig): BackgroundAudioTools {
  const sox = { soxPath: config.SOX_PATH, timeoutMs: config.AUDIO_DECODE_TIMEOUT_MS };
  return { sox, platform: createPlatformAudio({ ...sox, dir: path.resolve(config.BACKGROUND_AUDIO_DIR) }) };
}

let fromEnvironment: BackgroundAudioTools | undefined;
const toolsOf = (services: AppServices) =>
  services.backgroundAudio ??
  (fromEnvironment ??= backgroundAudioFromConfig(
    configVariables
      .pick({ BACKGROUND_AUDIO_DIR: true, SOX_PATH: true, AUDIO_DECODE_TIMEOUT_MS: true })
      .parse(process.env),
  ));

/** Platform assets first (in catalogue order), then the workspace's uploads, oldest first; never their audio. */
export async function listBackgroundAudio(
  services: AppServices,
  principal: Principal,
  previewUrlOf: (id: string) => string,
): Promise<BackgroundAudioAsset[]> {
  const tools = toolsOf(services);
  const [platform, uploads] = await Promise.all([
    Promise.all(
      PLATFORM_BACKGROUND_AUDIO.map(async (asset) => ({
        ...asset,
        durationSecs: (await tools.platform.fileOf(asset)).durationSecs,
        isPlatform: true,
      })),
    ),
    uploadsOfWorkspace(services.db, principal.workspaceId),
  ]);
  return [...platform, ...uploads.map((upload) => ({ ...upload, isPlatform: false }))].map(
    ({ id, slug, label, isPlatform, durationSecs }) => ({
      id,
      slug,
      label,
      isPlatform,
      durationSecs,
      previewUrl: previewUrlOf(id),
    }),
  );
}

const slugTaken = (slug: string) =>
  new Refusal(ErrorCode.background_audio_slug_taken, {
    detail: `${JSON.stringify(slug)} is already the slug of a background audio asset of this workspace`,
  });

/**
 * Decodes the upload to prove it is audio and measure it, then stores it. A platform slug is refused
 * here; another upload's is refused by the unique index on (workspaceId, slug), so two requests racing
 * for one slug cannot both win.
 */
export async function uploadBackgroundAudio(
  services: AppServices,
  principal: Principal,
  upload: NewBackgroundAudio,
): Promise<Omit<BackgroundAudioAsset, 'previewUrl'>> {
  // What is not audio is refused first (400), whatever its slug.
  const measured = await measureUpload(toolsOf(services).sox, upload.audio).catch((error: unknown) => {
    if (error instanceof AudioRefused)
      throw new z.ZodError([{ code: 'custom', path: ['audio'], message: error.message, input: undefined }]);
    throw error;
  });
  if (PLATFORM_BACKGROUND_AUDIO.some((asset) => asset.slug === upload.slug)) throw slugTaken(upload.slug);
  const workspaceId = principal.workspaceId;
  try {
    // After decoding: a slow decode holds no lock.
    const stored = await createWithinQuota(
      services.db,
      {
        workspaceId,
        noun: 'uploads',
        limit: UPLOAD_LIMITS.perWorkspace,
        code: ErrorCode.background_audio_limit_reached,
        count: (tx) => uploadCount(tx, workspaceId),
      },
      (tx) =>
        insertUpload(tx, {
          workspaceId,
          slug: upload.slug,
          label: upload.label,
          durationSecs: measured.durationSecs,
          mediaType: measured.mediaType,
          byteSize: upload.audio.length,
          sha256: createHash('sha256').update(upload.audio).digest('hex'),
          audio: new Uint8Array(upload.audio),
        }),
    );
    return { ...stored, isPlatform: false };
  } catch (error) {
    if (isUniqueViolation(error)) throw slugTaken(upload.slug);
    throw error;
  }
}

/**
 * Deletes one of the workspace's uploads, and in the same transaction takes it away from every agent of
 * the workspace that used it. A platform asset is nobody's to delete: 403 forbidden, as for any id that is
 * not an upload of the caller's workspace.
 */
export async function deleteBackgroundAudio(services: AppServices, principal: Principal, id: string): Promise<void> {
  const owned = await findOwned(principal, id, (where) => uploadIdWhere(services.db, where));
  // The row goes first, then its agents are set to none (background-audio-store.ts deleteUpload): 204 both when a
  // concurrent delete got there first.
  await deleteUpload(services.db, principal.workspaceId, owned.id);
}

/** The audio of a platform asset (made now if its file is missing) or of one of the workspace's uploads. */
export async function backgroundAudioContent(
  services: AppServices,
  principal: Principal,
  id: string,
): Promise<BackgroundAudioContent> {
  const platform = findPlatformBackgroundAudio(id);
  if (platform)
    return { mediaType: PLATFORM_AUDIO_MEDIA_TYPE, file: (await toolsOf(services).platform.fileOf(platform)).path };
  const upload = await findOwned(principal, id, (where) => uploadAudioWhere(services.db, where));
  return { mediaType: upload.mediaType, bytes: upload.audio };
}
