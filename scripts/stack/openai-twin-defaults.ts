import { OPENAI_TWIN_MODEL } from '../../simulators/openai-twin/config';

/** The settings' areas that ask a model: the dialogue engine (DIALOGUE_*) and call intelligence (INTELLIGENCE_*). */
export const MODEL_AREAS = ['DIALOGUE', 'INTELLIGENCE'] as const;
export type ModelArea = (typeof MODEL_AREAS)[number];

/**
 * `npm start`'s model settings (docs/features/conversation/model-engine.md#in-the-development-stack): each area's `<area>_PROVIDER`
 * becomes `openai-twin`, its `<area>_BASE_URL` and `<area>_API_KEY` the embedded OpenAI twin's (a key set for a real
 * endpoint is never sent to the twin) and its `<area>_MODEL` the twin's unless set, unless the operator configured the
 * area: an endpoint of their own (`<area>_BASE_URL`: the real one wins), or another provider (`openai-compatible`,
 * `script`, `rule-based`). Never `openai-compatible`: what the twin answers is recorded under the twin's name. Answers
 * the areas pointed at the twin.
 */
export function pointModelsAtOpenAiTwin(
  env: NodeJS.ProcessEnv,
  twin: { baseURL: string; apiKey: string },
): ModelArea[] {
  const pointed: ModelArea[] = [];
  for (const area of MODEL_AREAS) {
    const provider = env[`${area}_PROVIDER`];
    if (env[`${area}_BASE_URL`] || (provider && provider !== 'openai-twin')) continue;
    env[`${area}_PROVIDER`] = 'openai-twin';
    env[`${area}_BASE_URL`] = twin.baseURL;
    env[`${area}_MODEL`] ||= OPENAI_TWIN_MODEL;
    env[`${area}_API_KEY`] = twin.apiKey;
    pointed.push(area);
  }
  return pointed;
}

/** The stack's line about the twin: what it serves, or that the operator's settings left it unused. */
export function openAiTwinUse(pointed: readonly ModelArea[]): string {
  const uses = { DIALOGUE: 'the dialogue of agents with instructions', INTELLIGENCE: 'call intelligence' };
  const own = MODEL_AREAS.filter((area) => !pointed.includes(area)).map((area) => `${area}_*`);
  return [
    pointed.length
      ? `rules, not a model, recorded as openai-twin: ${pointed.map((area) => uses[area]).join(' and ')}`
      : 'unused',
    own.length ? `${own.join(' and ')} as configured` : '',
  ]
    .filter(Boolean)
    .join('; ');
}
