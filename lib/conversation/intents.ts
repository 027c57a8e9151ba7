import { findTimeExpression } from './time-expressions';
import { alternation, normaliseUtterance, RULE_LANGUAGES, ruleLanguageOf, type RuleLanguage } from './utterance';

/** What the lead meant, as the script engine's rules read it (docs/features/conversation/rules.md#intents). */
export type Intent =
  | { kind: 'opt_out' }
  | { kind: 'wants_person' }
  /** timePhrase: the words naming when (for resolveCallbackTime), null when the lead named none ("call me later"). */
  | { kind: 'callback'; timePhrase: string | null }
  | { kind: 'yes' }
  | { kind: 'no' }
  | { kind: 'other' };

interface IntentVocabulary {
  optOut: readonly RegExp[];
  wantsPerson: readonly RegExp[];
  /** Words asking for a call at another time, with or without saying when. */
  callbackRequest: readonly RegExp[];
  yes: readonly string[];
  no: readonly string[];
  /** Neither yes nor no, though they hold a "no" ("no sé", "I'm not sure"): read so that they hide it. */
  unsure: readonly string[];
  /** Words that leave an utterance a bare answer: "maybe tomorrow at three, please" only names a time. */
  filler: readonly string[];
}

const PERSON_EN =
  '(?:a |an |some |your |the |to a )?(?:real |live |actual )?(?:person|human|human being|agent|someone|somebody|representative|rep|operator|manager|supervisor|people)';
const PERSON_ES =
  '(?:una |un |alguna |algun |el |la |su )?(?:persona|humano|ser humano|agente|alguien|operador|operadora|asesor|asesora|representante|encargado|encargada|supervisor|supervisora|gerente|responsable)';

const VOCABULARIES: Record<RuleLanguage, IntentVocabulary> = {
  en: {
    optOut: [
      /\bstop (?:calling|contacting|phoning|ringing|bothering)\b/,
      /\b(?:dont|do not|never) (?:ever )?(?:call|contact|phone|ring)(?: me| us| this number| here)?(?: ever)? (?:again|anymore|any more)\b/,
      // "Don't call me." alone; "don't call me tomorrow, call me Friday" is not an opt-out.
      /\b(?:dont|do not) (?:ever )?(?:call|contact|phone|ring)(?: me| us| this number| here)?(?: please)?$/,
      /\bnever (?:call|contact|phone|ring) (?:me|us|this number)\b/,
      /\b(?:remove|delete|erase) (?:me|us|my (?:number|name|details|info|information)|this number)\b/,
      /\b(?:be|get|been) removed\b/,
      /\btake (?:me|us|my (?:number|name)|this number) off\b/,
      /\b(?:do not call|dont call|dnc|no call) list\b/,
      /\b(?:unsubscribe|opt out|optout|no more calls|leave me alone|lose my number)\b/,
    ],
    wantsPerson: [
      new RegExp(`\\b(?:talk|speak|chat) (?:to|with) ${PERSON_EN}\\b`),
      /\b(?:real|live|actual) (?:person|human|agent)\b/,
      /\b(?:transfer|connect|put) me (?:through|to|with)\b/,
      /\btransfer me\b/,
      /\b(?:someone|somebody|a person|a human) (?:i can )?(?:talk|speak) (?:to|with)\b/,
      /\b(?:want|need|get me|give me) (?:a |an )?(?:human|person|operator|representative|agent)\b/,
      /^(?:a |an )?(?:human|person|operator|representative|agent)(?: please)?$/,
    ],
    callbackRequest: [
      /\b(?<!(?:dont|do not|never) )call (?:me|us)\b/,
      /\bcall (?:me |us )?back\b/,
      /\b(?:callback|later|busy|bad time|not a good time|cant talk|get back to me|reach me)\b/,
      /\bring me\b/,
      /\btry (?:me |us )?(?:again|later|back)\b/,
      /\b(?:another|some other|a different) (?:time|day)\b/,
    ],
    yes: [
      'yes',
      'yeah',
      'yep',
      'yup',
      'ya',
      'sure',
      'of course',
      'ok',
      'okay',
      'all right',
      'alright',
      'correct',
      'right',
      'thats right',
      'absolutely',
      'definitely',
      'certainly',
      'sounds good',
      'go ahead',
      'i do',
      'i am',
      'please do',
      'no problem',
      'why not',
      'interested',
      'uh huh',
      'mhm',
      'fine',
      'perfect',
      'great',
      'yes please',
    ],
    no: [
      'no',
      'nope',
      'nah',
      'no thanks',
      'no thank you',
      'not interested',
      'not really',
      'i dont think so',
      'not at all',
      'of course not',
      'certainly not',
      'absolutely not',
      'definitely not',
      'never',
      'negative',
      'i dont',
      'not now',
      'not right now',
      'i dont want',
    ],
    unsure: ['not sure', 'im not sure', 'i am not sure', 'i dont know', 'dont know', 'no idea', 'i have no idea'],
    filler: [
      'please',
      'maybe',
      'perhaps',
      'how about',
      'what about',
      'lets say',
      'say',
      'try',
      'then',
      'well',
      'um',
      'uh',
      'er',
      'hmm',
      'i guess',
      'better',
      'works',
      'works for me',
      'is good',
      'is fine',
      'would be better',
      'would work',
      'or',
      'and',
    ],
  },
  es: {
    optOut: [
      /\bno (?:me |nos )?(?:llame|llames|llamen)(?: nunca)? mas\b/,
      /\bno (?:me |nos )?(?:vuelva|vuelvas|vuelvan) a (?:llamar|contactar|molestar)\b/,
      /\bnunca (?:me |nos )?(?:vuelva|vuelvas|vuelvan) a llamar\b/,
      /\b(?:deje|dejen|deja) de (?:llamar|llamarme|llamarnos|molestar|molestarme|contactarme)\b/,
      /\b(?:quiteme|quitame|quitenme|saqueme|sacame|saquenme|borreme|borrame|borrenme|elimineme|eliminame|eliminenme)\b/,
      /\b(?:quite|quiten|borre|borren|elimine|eliminen) mi (?:numero|telefono)\b/,
      /\b(?:de|la) baja\b/,
      /\bno quiero (?:que me (?:llamen|llame|vuelvan a llamar)|(?:mas|recibir(?: mas)?) llamadas)\b/,
      /\blista de no llamar\b/,
      /\b(?:dejeme|dejenme|dejame) en paz\b/,
      /\bno me moleste(?:n|s)? mas\b/,
    ],
    wantsPerson: [
      new RegExp(`\\b(?:hablar|platicar|comunicarme|conversar) con ${PERSON_ES}\\b`),
      /\b(?:persona|humano|agente) (?:real|de verdad)\b/,
      /\b(?:paseme|pasame|pasenme|pasar|pasarme|comuniqueme|comunicame|transfierame|transfiereme) (?:con|a)\b/,
      /\b(?:quiero|necesito) (?:una persona|un humano|un agente|un asesor|alguien)\b/,
      /^(?:una persona|un humano|operador|operadora|un agente)(?: por favor)?$/,
    ],
    callbackRequest: [
      /\b(?:llameme|llamame|llamenme|llamanos|llamenos|vuelvame a llamar|volver a llamar)\b/,
      /\b(?<!no )(?:me|nos) (?:puede|puedes|pueden|podria|podrias|podrian) (?:llamar|volver a llamar)\b/,
      /\b(?<!no (?:me |nos )?)(?:vuelva|vuelvas|vuelvan) a llamar(?:me|nos)?\b/,
      /\b(?<!no (?:me |nos )?)(?:llame|llamen|llama) (?:mas tarde|luego|otro dia|manana|pasado|el |en |a las?|esta|hoy)/,
      /\b(?:mas tarde|en otro momento|otro dia|ocupad[oa]s?|ahora no puedo|no puedo hablar)\b/,
      /\bno es (?:un )?buen momento\b/,
    ],
    yes: [
      'si',
      'claro',
      'claro que si',
      'vale',
      'ok',
      'okey',
      'de acuerdo',
      'por supuesto',
      'correcto',
      'exacto',
      'efectivamente',
      'esta bien',
      'como no',
      'desde luego',
      'me interesa',
      'perfecto',
      'dale',
      'sale',
      'no hay problema',
      'sin problema',
      'por que no',
      'si por favor',
    ],
    no: [
      'no',
      'no gracias',
      'para nada',
      'en absoluto',
      'no me interesa',
      'no estoy interesado',
      'no estoy interesada',
      'nunca',
      'de ninguna manera',
      'ni hablar',
      'claro que no',
      'ahora no',
    ],
    unsure: ['no se', 'no lo se', 'no estoy seguro', 'no estoy segura', 'ni idea', 'no sabria decir'],
    filler: [
      'por favor',
      'mejor',
      'quizas',
      'quiza',
      'tal vez',
      'pues',
      'entonces',
      'que tal',
      'bueno',
      'puede ser',
      'me va bien',
      'me viene bien',
      'o',
      'y',
      'eh',
      'em',
    ],
  },
};

const phraseSearch = (phrases: readonly string[]) => new RegExp(`\\b(?:${alternation(phrases)})\\b`, 'g');

function byLanguage<T>(make: (vocabulary: IntentVocabulary) => T): Record<RuleLanguage, T> {
  return { en: make(VOCABULARIES.en), es: make(VOCABULARIES.es) };
}

const YES_OR_NO = byLanguage(({ yes, no, unsure }) => ({
  search: phraseSearch([...yes, ...no, ...unsure]),
  yes: new Set(yes),
  no: new Set(no),
}));

const BARE_ANSWER_WORDS = byLanguage(({ yes, no, filler }) => phraseSearch([...yes, ...no, ...filler]));

const saysAny = (text: string, patterns: readonly RegExp[]) => patterns.some((pattern) => pattern.test(text));

/**
 * Yes or no, by the last one said ("no... yes, go ahead" is a yes: people correct themselves); null when neither, or
 * when the last thing said was unsure.
 */
function yesOrNo(text: string, language: RuleLanguage): 'yes' | 'no' | null {
  const { search, yes, no } = YES_OR_NO[language];
  const said = [...text.matchAll(search)].at(-1)?.[0] ?? '';
  return yes.has(said) ? 'yes' : no.has(said) ? 'no' : null;
}

const saysOptOutIn = (normalised: string) =>
  RULE_LANGUAGES.some((known) => saysAny(normalised, VOCABULARIES[known].optOut));

/**
 * Whether an utterance asks not to be contacted again, in any language the rules know (recogniseIntent's first rule,
 * docs/features/conversation/rules.md#intents): what every engine and the call intelligence read an opt-out with.
 */
export function saysOptOut(utterance: string): boolean {
  return saysOptOutIn(normaliseUtterance(utterance));
}

/**
 * The lead's intent in an utterance, in the agent's language (a BCP 47 tag; English rules for languages without
 * their own). Precedence, first that applies: an opt-out in any language the rules know (a request not to be called
 * must never be missed for the agent's language), a request for a person, a callback (a request to be called at
 * another time, or an answer that is only a time, maybe with a yes or a no: "no, tomorrow at three"), then yes or no.
 */
export function recogniseIntent(utterance: string, language: string): Intent {
  const text = normaliseUtterance(utterance);
  const rules = ruleLanguageOf(language);
  const vocabulary = VOCABULARIES[rules];
  if (saysOptOutIn(text)) return { kind: 'opt_out' };
  if (saysAny(text, vocabulary.wantsPerson)) return { kind: 'wants_person' };
  const time = findTimeExpression(text, rules);
  const timePhrase = time ? text.slice(...time.span) : null;
  if (saysAny(text, vocabulary.callbackRequest)) return { kind: 'callback', timePhrase };
  if (timePhrase !== null) {
    const rest = (text.slice(0, time!.span[0]) + ' ' + text.slice(time!.span[1])).replace(BARE_ANSWER_WORDS[rules], '');
    if (rest.trim() === '') return { kind: 'callback', timePhrase };
  }
  return { kind: yesOrNo(text, rules) ?? 'other' };
}
