import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SpeechSynthesisError, type SpeechSynthesizer } from '../../lib/voices/speech';
import { configVariables, type Config } from '../../lib/config';
import { previewSynthesizerFromConfig } from '../../lib/providers';
import { ErrorCode } from '../../lib/error-codes';
import { findVoice, previewSentenceOf } from '../../lib/voices/voices';
import { Refusal } from '../../lib/refusal';
import { log } from '../../lib/log';
import type { PreviewFile, VoicePreviews } from '../../lib/voices/previews';

export interface VoicePreviewOptions {
  /** PREVIEW_CACHE_DIR, resolved. */
  dir: string;
  /** The one synthesiser of previews (VOICE_PREVIEW_SYNTHESIZER): a voice it does not speak has none (501). */
  synthesizer: SpeechSynthesizer;
  /** PREVIEW_CACHE_MAX_FILES: past it, the least recently made files are deleted (default 500). */
  maxFiles?: number;
}

/** The cache key: what the file says and what made it. JSON keeps the parts apart (no "a"+"bc" = "ab"+"c"). */
export const previewCacheKey = (voiceId: string, text: string, providerVersion: string) =>
  createHash('sha256')
    .update(JSON.stringify([voiceId, text, providerVersion]))
    .digest('hex');

async function sizeOf(file: string): Promise<number | null> {
  try {
    return (await stat(file)).size;
  } catch {
    return null;
  }
}

/** Deletes the least recently made previews past `maxFiles` (never `keep`, the file just made). */
async function prune(dir: string, maxFiles: number, keep: string): Promise<void> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.mp3'));
  if (names.length <= maxFiles) return;
  const files = await Promise.all(
    names.map(async (name) => ({ file: path.join(dir, name), madeAt: (await stat(path.join(dir, name))).mtimeMs })),
  );
  const oldestFirst = files.filter(({ file }) => file !== keep).sort((a, b) => a.madeAt - b.madeAt);
  for (const { file } of oldestFirst.slice(0, names.length - maxFiles)) await rm(file, { force: true });
}

export function createVoicePreviews(options: VoicePreviewOptions): VoicePreviews {
  // Concurrent first requests for one key share one synthesis (in this process).
  const inFlight = new Map<string, Promise<PreviewFile>>();
  const { synthesizer } = options;
  const maxFiles = options.maxFiles ?? 500;

  async function synthesizeInto(file: string, engineVoice: string, text: string): Promise<PreviewFile> {
    const audio = await synthesizer.synthesize(engineVoice, text);
    await mkdir(options.dir, { recursive: true });
    // Written aside, then renamed: a reader (or another process) sees the whole file or none.
    const temporary = `${file}.${randomUUID()}.tmp`;
    try {
      await writeFile(temporary, audio);
      await rename(temporary, file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    await prune(options.dir, maxFiles, file).catch((error: unknown) =>
      log.warn({ err: error }, 'voice previews: the cache could not be pruned'),
    );
    return { path: file, size: audio.length, synthesizer: synthesizer.name };
  }

  return {
    async fileOf(voiceId) {
      const voice = findVoice(voiceId);
      if (!voice) throw new Refusal(ErrorCode.voice_not_found);
      const engineVoice = synthesizer.engineVoiceOf(voice);
      if (engineVoice === null) throw new Refusal(ErrorCode.preview_not_supported);
      const text = previewSentenceOf(voice);
      try {
        const key = previewCacheKey(voice.id, text, await synthesizer.version());
        const file = path.join(options.dir, `${key}.mp3`);
        const cachedSize = await sizeOf(file);
        if (cachedSize !== null) return { path: file, size: cachedSize, synthesizer: synthesizer.name };
        let pending = inFlight.get(key);
        if (!pending) {
          pending = synthesizeInto(file, engineVoice, text).finally(() => inFlight.delete(key));
          inFlight.set(key, pending);
        }
        return await pending;
      } catch (error) {
        if (error instanceof SpeechSynthesisError) {
          log.error({ err: error, voice: voice.id, synthesizer: synthesizer.name }, 'voice preview failed');
          throw new Refusal(ErrorCode.provider_error, { upstreamStatus: error.upstreamStatus });
        }
        throw error;
      }
    },
  };
}

type SpeechConfig = Parameters<typeof previewSynthesizerFromConfig>[0] &
  Pick<Config, 'PREVIEW_CACHE_DIR' | 'PREVIEW_CACHE_MAX_FILES'>;

/** The previews of a process: the synthesiser VOICE_PREVIEW_SYNTHESIZER names, the cache in PREVIEW_CACHE_DIR. */
export function voicePreviewsFromConfig(config: SpeechConfig): VoicePreviews {
  return createVoicePreviews({
    dir: path.resolve(config.PREVIEW_CACHE_DIR),
    synthesizer: previewSynthesizerFromConfig(config),
    maxFiles: config.PREVIEW_CACHE_MAX_FILES,
  });
}

let fromEnvironment: VoicePreviews | undefined;
/** For apps built without voice previews of their own (benches, tests of other things): the environment's settings. */
export function defaultVoicePreviews(): VoicePreviews {
  fromEnvironment ??= voicePreviewsFromConfig(
    configVariables
      .pick({
        ESPEAK_NG_PATH: true,
        LAME_PATH: true,
        SPEECH_TIMEOUT_MS: true,
        PREVIEW_CACHE_DIR: true,
        PREVIEW_CACHE_MAX_FILES: true,
        VOICE_PREVIEW_SYNTHESIZER: true,
        POLLY_REGION: true,
        POLLY_ENDPOINT: true,
        POLLY_ACCESS_KEY_ID: true,
        POLLY_SECRET_ACCESS_KEY: true,
      })
      .parse(process.env),
  );
  return fromEnvironment;
}
