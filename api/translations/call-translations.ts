import type { CallTranslation } from '../../generated/prisma/client';
import { TranslationError, type Translator } from '../../lib/translations/translator';
import { transcriptSchema, type Transcript } from '../../lib/calls/transcript';
import { configVariables } from '../../lib/config';
import { translatorFromConfig } from '../../lib/providers';
import { ErrorCode } from '../../lib/error-codes';
import { choosePair } from '../../lib/translations/translation-languages';
import { Refusal } from '../../lib/refusal';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { findOwned } from '../http/owned';
import { log } from '../../lib/log';
import { agentLanguage, callTranscriptWhere, insertTranslationOnce, storedTranslation } from './translation-store';

/** When neither the request nor the call's agent names the transcript's language. */
export const DEFAULT_SOURCE_LANGUAGE = 'en';

export interface TranslationRequest {
  /** Canonical BCP 47 tags (the route's schema canonicalises them). */
  language: string;
  sourceLanguage?: string;
}

function translationView(translation: CallTranslation) {
  return {
    callId: translation.callId,
    language: translation.language,
    sourceLanguage: translation.sourceLanguage,
    provider: translation.provider,
    // As stored: written only below, in the transcript's shape.
    turns: translation.turns as Transcript,
    createdAt: translation.createdAt.toISOString(),
  };
}

/** The translator's failure as the API answers it (as voice previews do): 502 provider_error with upstreamStatus. */
async function askTranslator<Result>(work: () => Promise<Result>): Promise<Result> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof TranslationError)) throw error;
    log.error({ err: error }, 'the translator failed');
    throw new Refusal(ErrorCode.provider_error, { upstreamStatus: error.upstreamStatus });
  }
}

/**
 * The call's transcript in `language`: stored per (call, language) on the first request, answered from the
 * store after that (the translator is not run again). The language stored and answered is the installed
 * pair's target (`es-MX` asked of an `es` pair is stored as `es`).
 */
export async function translateCallTranscript(
  services: AppServices,
  principal: Principal,
  callId: string,
  request: TranslationRequest,
) {
  const { db } = services;
  const call = await findOwned(principal, callId, (where) => callTranscriptWhere(db, where));
  const stored = (language: string) => storedTranslation(db, call.id, language);

  const asked = await stored(request.language);
  if (asked) return translationView(asked);
  const transcript = transcriptOf(call);
  if (transcript.length === 0) throw new Refusal(ErrorCode.call_has_no_transcript);

  const translator = services.translator ?? defaultTranslator();
  const installed = await askTranslator(() => translator.pairs());
  const sourceLanguage = request.sourceLanguage ?? (await agentLanguageOf(services, call.agentId));
  const pair = choosePair(installed, sourceLanguage, request.language);
  if (!pair)
    throw new Refusal(ErrorCode.translation_pair_unsupported, {
      detail: `No installed translation from ${sourceLanguage} into ${request.language}.`,
      pairs: installed.map(({ from, to }) => ({ from, to })),
    });
  const already = pair.to === request.language ? null : await stored(pair.to);
  if (already) return translationView(already);

  const texts = await askTranslator(() =>
    translator.translate(
      transcript.map((turn) => turn.text),
      pair,
    ),
  );
  const turns = transcript.map((turn, index) => ({ ...turn, text: texts[index]! }));
  // A concurrent request for the same language may have stored its translation first: that one is kept
  // and answered to both, so every answer for (call, language) is the stored one.
  await insertTranslationOnce(db, {
    callId: call.id,
    language: pair.to,
    sourceLanguage: pair.from,
    provider: pair.provider,
    turns,
  });
  return translationView((await stored(pair.to))!);
}

/**
 * The stored transcript, [] when there is none. Written by the carrier path only in this shape: anything
 * else is a fault of ours (500), not a bad request (a ZodError would be answered 400 invalid_body).
 */
function transcriptOf(call: { id: string; transcript: unknown }): Transcript {
  if (call.transcript === null) return [];
  const parsed = transcriptSchema.safeParse(call.transcript);
  if (!parsed.success) throw new Error(`call ${call.id}: the stored transcript is not transcript-shaped`);
  return parsed.data;
}

/** The language the call's agent speaks (deleted agents keep theirs), else the default. */
async function agentLanguageOf({ db }: AppServices, agentId: string | null): Promise<string> {
  const agent = agentId ? await agentLanguage(db, agentId) : null;
  return agent?.language ?? DEFAULT_SOURCE_LANGUAGE;
}

let fromEnvironment: Translator | undefined;
/** For apps built without a translator of their own (benches, tests of other things): the environment's settings. */
function defaultTranslator(): Translator {
  fromEnvironment ??= translatorFromConfig(
    configVariables.pick({ APERTIUM_BIN: true, TRANSLATION_TIMEOUT_MS: true }).parse(process.env),
  );
  return fromEnvironment;
}
