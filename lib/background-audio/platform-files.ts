import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { PLATFORM_AUDIO_OUTPUT, type PlatformBackgroundAudio } from './platform-assets';
import { decodeAudio, runSox, soxVersion, type SoxOptions } from './sox';

export interface PlatformAudioOptions extends SoxOptions {
  /** BACKGROUND_AUDIO_DIR, resolved. */
  dir: string;
}

export interface PlatformAudioFile {
  path: string;
  /** Measured by decoding the file. */
  durationSecs: number;
}

/** No platform file plays longer: a recipe that makes one is a mistake, not a loop. */
const LONGEST_PLATFORM_SECS = 60;

/** What a platform file is: its recipe and the sox that runs it. A new recipe or sox makes a new file. */
export const platformAudioKey = (asset: PlatformBackgroundAudio, version: string) =>
  createHash('sha256')
    .update(JSON.stringify([asset.effects, PLATFORM_AUDIO_OUTPUT.args, version]))
    .digest('hex')
    .slice(0, 16);

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

/**
 * The asset's file, made by its recipe unless a file with the recipe's content key is there already.
 * Written aside, then renamed: a reader (or another process making it too) sees the whole file or none.
 * Files of the asset's earlier recipes are removed once the new one is in place.
 */
export async function makePlatformAudioFile(
  options: PlatformAudioOptions,
  asset: PlatformBackgroundAudio,
): Promise<{ path: string; made: boolean }> {
  const name = `${asset.slug}.${platformAudioKey(asset, await soxVersion(options))}.${PLATFORM_AUDIO_OUTPUT.extension}`;
  const file = path.join(options.dir, name);
  if (await exists(file)) return { path: file, made: false };
  await mkdir(options.dir, { recursive: true });
  const temporary = `${file}.${randomUUID()}.tmp`;
  try {
    const type = PLATFORM_AUDIO_OUTPUT.extension;
    await runSox(options, ['-R', '-n', ...PLATFORM_AUDIO_OUTPUT.args, '-t', type, temporary, ...asset.effects]);
    await rename(temporary, file);
  } finally {
    await rm(temporary, { force: true });
  }
  const stale = (await readdir(options.dir)).filter(
    (entry) => entry !== name && entry.startsWith(`${asset.slug}.`) && entry.endsWith(PLATFORM_AUDIO_OUTPUT.extension),
  );
  await Promise.all(stale.map((entry) => rm(path.join(options.dir, entry), { force: true })));
  return { path: file, made: true };
}

/** Makes (if missing) and measures a platform file. */
export async function platformAudioFile(
  options: PlatformAudioOptions,
  asset: PlatformBackgroundAudio,
): Promise<PlatformAudioFile & { made: boolean }> {
  const { path: file, made } = await makePlatformAudioFile(options, asset);
  const { durationSecs } = await decodeAudio(options, file, PLATFORM_AUDIO_OUTPUT.extension, LONGEST_PLATFORM_SECS);
  return { path: file, durationSecs, made };
}

/** The platform files of a process: each made or found, and measured, once; found again if its file goes. */
export interface PlatformAudio {
  fileOf(asset: PlatformBackgroundAudio): Promise<PlatformAudioFile>;
}

export function createPlatformAudio(options: PlatformAudioOptions): PlatformAudio {
  const known = new Map<string, Promise<PlatformAudioFile>>();
  return {
    async fileOf(asset) {
      let pending = known.get(asset.id);
      if (pending && !(await exists((await pending.catch(() => null))?.path ?? ''))) pending = undefined;
      if (!pending) {
        pending = platformAudioFile(options, asset);
        known.set(asset.id, pending);
        // A failure is not remembered: the next request tries again.
        const made = pending;
        made.catch(() => known.get(asset.id) === made && known.delete(asset.id));
      }
      return pending;
    },
  };
}

/** sox as the process runs it, and the platform's files it makes with it (AppServices.backgroundAudio). */
export interface BackgroundAudioTools {
  sox: SoxOptions;
  platform: PlatformAudio;
}
