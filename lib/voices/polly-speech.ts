import type { Engine, PollyClient, VoiceId } from '@aws-sdk/client-polly';
import { POLLY_VOICES } from '../carriers/polly-voices';
import { SpeechSynthesisError, type SpeechSynthesizer } from './speech';

export interface PollySpeechOptions {
  /** amazon-polly, or polly-twin: the same protocol through the twin, named apart in every answer. */
  name: 'amazon-polly' | 'polly-twin';
  region: string;
  /** Unset: AWS's regional endpoint. */
  endpoint?: string;
  /** Unset: the AWS SDK's default credentials (the deployment's role, AWS_* variables). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** One synthesis, retries included, must be done within this (SPEECH_TIMEOUT_MS). */
  timeoutMs: number;
}

/**
 * The engine previews are made with: neural, the engine of the voices calls speak on Telnyx and on Twilio's
 * ConversationRelay (lib/carriers/polly-voices.ts); Twilio's <Say> speaks the standard voice of the same name.
 */
export const PREVIEW_ENGINE: Engine = 'neural';
/** Polly's MP3 at the neural engine's default rate. */
const FORMAT = { OutputFormat: 'mp3', SampleRate: '24000' } as const;

/**
 * Amazon Polly's SynthesizeSpeech through the official SDK (docs/features/voices.md#who-synthesises-previews): the
 * catalogue voice's Polly neural voice (`POLLY_VOICES`), plain text, MP3. Polly's URL is the deployment's, never a
 * tenant's: it does not go through the egress guard.
 */
export function createPollySynthesizer(options: PollySpeechOptions): SpeechSynthesizer {
  // The SDK is loaded on the first preview, not when the process starts: every API and worker process builds its
  // providers, and the SDK's import costs 0.3 to 0.4 s of CPU each time, for a deployment that may never preview.
  let sdk:
    | Promise<{
        client: PollyClient;
        SynthesizeSpeechCommand: typeof import('@aws-sdk/client-polly').SynthesizeSpeechCommand;
      }>
    | undefined;
  const loaded = () =>
    (sdk ??= import('@aws-sdk/client-polly').then(({ PollyClient, SynthesizeSpeechCommand }) => ({
      client: new PollyClient({
        region: options.region,
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
        maxAttempts: 2,
      }),
      SynthesizeSpeechCommand,
    })));
  return {
    name: options.name,
    engineVoiceOf: (voice) => (voice.provider === 'simulated' ? null : (POLLY_VOICES[voice.id]?.neural ?? null)),
    // What decides the audio besides voice and text: who, where, which engine and format.
    version: () =>
      Promise.resolve(
        `${options.name} ${options.endpoint ?? options.region} ${PREVIEW_ENGINE} ${FORMAT.OutputFormat} ${FORMAT.SampleRate}`,
      ),
    async synthesize(engineVoice, text) {
      const abortSignal = AbortSignal.timeout(options.timeoutMs);
      try {
        const { client, SynthesizeSpeechCommand } = await loaded();
        const answer = await client.send(
          new SynthesizeSpeechCommand({
            ...FORMAT,
            Engine: PREVIEW_ENGINE,
            VoiceId: engineVoice as VoiceId,
            Text: text,
            TextType: 'text',
          }),
          { abortSignal },
        );
        if (!answer.AudioStream) throw new SpeechSynthesisError(500, `${options.name} answered no audio`);
        return Buffer.from(await answer.AudioStream.transformToByteArray());
      } catch (error) {
        throw synthesisErrorOf(options.name, error, abortSignal.aborted);
      }
    },
  };
}

/** A Polly failure as the preview's provider_error: too slow 504, not reached 503, an error answered 500. */
function synthesisErrorOf(name: string, error: unknown, timedOut: boolean): SpeechSynthesisError {
  if (error instanceof SpeechSynthesisError) return error;
  const failure = error as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  if (timedOut) return new SpeechSynthesisError(504, `${name} did not answer in time`);
  const status = failure.$metadata?.httpStatusCode;
  if (status === undefined)
    return new SpeechSynthesisError(503, `${name} cannot be reached: ${failure.code ?? failure.name ?? 'error'}`);
  return new SpeechSynthesisError(500, `${name} answered ${status} ${failure.name ?? ''}: ${failure.message ?? ''}`);
}
