/** One direction a translator can translate in, as BCP 47 tags (`en`, `es`, `en-US`). */
export interface TranslationPair {
  from: string;
  to: string;
}

const primarySubtag = (tag: string) => tag.split('-')[0]!.toLowerCase();

/**
 * Which of `installed` translates a requested language: its exact tag first, else the installed tag of the
 * same primary language without region or variant (`en-GB` -> `en`), else the first other one of that
 * language (`es` -> `es-ES` where only that is installed). Null: nothing of that language.
 */
function closestTag(requested: string, installed: readonly string[]): string | null {
  if (installed.includes(requested)) return requested;
  const sameLanguage = installed.filter((tag) => primarySubtag(tag) === primarySubtag(requested));
  return sameLanguage.find((tag) => !tag.includes('-')) ?? [...sameLanguage].sort()[0] ?? null;
}

/**
 * The installed pair that translates `from` into `to` (both canonical tags), or null. The source is matched
 * first (an agent speaking `en-US` translates with the `en` data), then the target among that source's pairs.
 */
export function choosePair<Pair extends TranslationPair>(
  installed: readonly Pair[],
  from: string,
  to: string,
): Pair | null {
  const source = closestTag(
    from,
    installed.map((pair) => pair.from),
  );
  if (source === null) return null;
  const fromSource = installed.filter((pair) => pair.from === source);
  const target = closestTag(
    to,
    fromSource.map((pair) => pair.to),
  );
  return fromSource.find((pair) => pair.to === target) ?? null;
}
