/**
 * The SSML Polly reads (docs.aws.amazon.com/polly/latest/dg/supportedtags.html), as far as a twin checks it (the Polly
 * twin, and the Telnyx twin for a speak of payload_type ssml, its voices being Polly's): a
 * `<speak>` document of the tags Polly supports, well nested, attributes quoted, text escaped (`&amp;`, `&lt;`, ...).
 * What it answers is the text spoken: the words, with a `<sub alias>` said as its alias and a `<phoneme>` as its
 * pronunciation (`/ph/`), so that a test can read what a voice would say. One pass over the document: linear time.
 */
const SUPPORTED_TAGS = new Set([
  'speak',
  'break',
  'emphasis',
  'lang',
  'mark',
  'p',
  'phoneme',
  'prosody',
  's',
  'say-as',
  'sub',
  'w',
  'amazon:auto-breaths',
  'amazon:breath',
  'amazon:domain',
  'amazon:effect',
]);

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export class SsmlError extends Error {}

function unescape(text: string): string {
  return text.replace(/&([^;&<\s]{0,10});?/g, (whole, name: string) => {
    if (!whole.endsWith(';')) throw new SsmlError('Invalid SSML request: an & that starts no entity');
    if (name.startsWith('#x')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10));
    const value = ENTITIES[name];
    if (value === undefined) throw new SsmlError(`Invalid SSML request: unknown entity &${name};`);
    return value;
  });
}

const TAG = /<(\/?)([a-zA-Z][\w:-]*)((?:\s+[\w:-]+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>/y;
const ATTRIBUTE = /([\w:-]+)\s*=\s*(?:"([^"<]*)"|'([^'<]*)')/g;

/** The words a voice says for `ssml`, or an SsmlError (Polly's InvalidSsmlException). */
export function spokenTextOf(ssml: string): string {
  const open: Array<{ name: string; replaced: boolean }> = [];
  const spoken: string[] = [];
  let at = 0;
  let sawRoot = false;
  const silenced = () => open.some((element) => element.replaced);
  while (at < ssml.length) {
    const next = ssml.indexOf('<', at);
    const text = ssml.slice(at, next < 0 ? ssml.length : next);
    if (text.trim() !== '') {
      if (open.length === 0) throw new SsmlError('Invalid SSML request: text outside <speak>');
      if (!silenced()) spoken.push(unescape(text));
    }
    if (next < 0) break;
    TAG.lastIndex = next;
    const tag = TAG.exec(ssml);
    if (!tag) throw new SsmlError('Invalid SSML request: a malformed tag');
    at = TAG.lastIndex;
    const [, closing, name, attributeText, selfClosing] = tag as unknown as string[];
    if (!SUPPORTED_TAGS.has(name!)) throw new SsmlError(`Invalid SSML request: unsupported tag <${name}>`);
    if (closing) {
      if (open.pop()?.name !== name) throw new SsmlError(`Invalid SSML request: </${name}> closes no open <${name}>`);
      continue;
    }
    if (name === 'speak' ? sawRoot || open.length > 0 : open.length === 0)
      throw new SsmlError('Invalid SSML request: the document must be one <speak> element');
    sawRoot = true;
    const attributes = new Map<string, string>();
    for (const attribute of attributeText!.matchAll(ATTRIBUTE))
      attributes.set(attribute[1]!, unescape(attribute[2] ?? attribute[3] ?? ''));
    let replaced = false;
    if (name === 'sub' || name === 'phoneme') {
      const said = name === 'sub' ? attributes.get('alias') : attributes.get('ph');
      if (said === undefined)
        throw new SsmlError(`Invalid SSML request: <${name}> needs its ${name === 'sub' ? 'alias' : 'ph'} attribute`);
      if (!silenced()) spoken.push(name === 'sub' ? said : `/${said}/`);
      replaced = true;
    }
    if (!selfClosing) open.push({ name: name!, replaced });
  }
  if (!sawRoot || open.length > 0) throw new SsmlError('Invalid SSML request: <speak> is not closed');
  return spoken.join(' ').replace(/\s+/g, ' ').trim();
}
