import { createHash, randomUUID } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SpeechSynthesisError, type SpeechSynthesizer } from '../../lib/voices/speech';
import { configVariables, type Config } from '../../lib/config';
import { speechSynthesizersFromConfig } from '../../lib/providers';
import { ErrorCode } from '../../lib/error-codes';
import { findVoice, previewSentenceOf } from '../../lib/voices/voices';
import { Refusal } from '../../lib/refusal';
import { log } from '../../lib/log';
import type { PreviewFile, VoicePreviews } from '../../lib/voices/previews';

export interface VoicePreviewOptions {
  /** PREVIEW_CACHE_DIR, resolved. */
  dir: string;
  /** One synthesiser per provider that offers previews, by provider name. */
  synthesizers: readonly SpeechSynthesizer[];
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

export function createVoicePreviews(options: VoicePreviewOptions): VoicePreviews {
  // Concurrent first requests for one key share one synthesis (in this process).
  const inFlight = new Map<string, Promise<PreviewFile>>();

  async function synthesizeInto(file: string, synthesizer: SpeechSynthesizer, engineVoice: string, text: string) {
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
    return { path: file, size: audio.length };
  }

  return {
    async fileOf(voiceId) {
      const voice = findVoice(voiceId);
      if (!voice) throw new Refusal(ErrorCode.voice_not_found);
      const synthesizer = options.synthesizers.find((candidate) => candidate.name === voice.provider);
      if (!synthesizer || voice.engineVoice === null) throw new Refusal(ErrorCode.preview_not_supported);
      const text = previewSentenceOf(voice);
      try {
        const key = previewCacheKey(voice.id, text, await synthesizer.version());
        const file = path.join(options.dir, `${key}.mp3`);
        const cachedSize = await sizeOf(file);
        if (cachedSize !== null) return { path: file, size: cachedSize };
        let pending = inFlight.get(key);
        if (!pending) {
          pending = synthesizeInto(file, synthesizer, voice.engineVoice, text).finally(() => inFlight.delete(key));
          inFlight.set(key, pending);
        }
        return await pending;
      } catch (error) {
        if (error instanceof SpeechSynthesisError) {
          log.error({ err: error, voice: voice.id }, 'voice preview failed');
          throw new Refusal(ErrorCode.provider_error, { upstreamStatus: error.upstreamStatus });
        }
        throw error;
      }
    },
  };
}

type SpeechConfig = Pick<Config, 'ESPEAK_NG_PATH' | 'LAME_PATH' | 'SPEECH_TIMEOUT_MS' | 'PREVIEW_CACHE_DIR'>;

/** The previews of a process: espeak-ng as the config names it, the cache in PREVIEW_CACHE_DIR. */
export function voicePreviewsFromConfig(config: SpeechConfig): VoicePreviews {
  return createVoicePreviews({
    dir: path.resolve(config.PREVIEW_CACHE_DIR),
    synthesizers: speechSynthesizersFromConfig(config),
  });
}

let fromEnvironment: VoicePreviews | undefined;
/** For apps built without voice previews of their own (benches, tests of other things): the environment's settings. */
export function defaultVoicePreviews(): VoicePreviews {
  fromEnvironment ??= voicePreviewsFromConfig(
    configVariables
      .pick({ ESPEAK_NG_PATH: true, LAME_PATH: true, SPEECH_TIMEOUT_MS: true, PREVIEW_CACHE_DIR: true })
      .parse(process.env),
  );
  return fromEnvironment;
}
