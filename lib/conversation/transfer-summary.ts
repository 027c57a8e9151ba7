/**
 * What a warm transfer's human hears before the lead is bridged (docs/features/conversation/tools.md#warm-transfer):
 * the model's `summary` argument, or for the script engine a summary composed from why the lead asked for a person and
 * the script's answers so far. Tenant text (a lead's words, a model's argument), so bounded: at most
 * TRANSFER_SUMMARY_MAX_CHARS code points, made in one pass that stops at the cap (docs/hostile-input.md).
 */

/** A summary's cap in code points: about 40 seconds said, what a colleague listens to before taking the call. */
export const TRANSFER_SUMMARY_MAX_CHARS = 600;

const ELLIPSIS = '…';

/** Whitespace (and control characters) as a summary reads it: each run becomes one space. */
const isSpace = (unit: number) =>
  unit <= 0x20 ||
  unit === 0xa0 ||
  unit === 0x1680 ||
  (unit >= 0x2000 && unit <= 0x200a) ||
  (unit >= 0x2028 && unit <= 0x2029) ||
  unit === 0x202f ||
  unit === 0x205f ||
  unit === 0x3000 ||
  unit === 0xfeff;

/**
 * The text with its whitespace runs made one space, trimmed, and cut at `max` code points (an ellipsis ending a cut
 * one, within the `max`); null when nothing is left. One pass over UTF-16 units that stops at the cap: linear in the
 * text, whatever is in it.
 */
export function boundedSummary(text: string, max = TRANSFER_SUMMARY_MAX_CHARS): string | null {
  const kept: string[] = [];
  let space = false;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (isSpace(unit)) {
      space = kept.length > 0;
      continue;
    }
    let char = text[index]!;
    const next = text.charCodeAt(index + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) char = text.slice(index, ++index + 1);
    if (kept.length + (space ? 2 : 1) > max) {
      const head = kept.slice(0, Math.max(0, max - 1));
      while (head.at(-1) === ' ') head.pop();
      return `${head.join('')}${ELLIPSIS}`;
    }
    if (space) kept.push(' ');
    space = false;
    kept.push(char);
  }
  return kept.length > 0 ? kept.join('') : null;
}

/** One of the script's questions and the lead's answer to it. */
export interface ScriptAnswer {
  question: string;
  answer: string;
}

/**
 * The script engine's summary: why the lead asked for a person (`reason`, e.g. `Ana asked to speak to a person: "..."`),
 * then "Answers so far:" and each question with the lead's answer, until the cap. Each part is bounded to what is left
 * before it is joined, and the parts stop at the cap: linear in the parts read.
 */
export function scriptTransferSummary(reason: string, answers: readonly ScriptAnswer[]): string | null {
  const parts = [reason, ...(answers.length > 0 ? ['Answers so far:'] : [])];
  for (const { question, answer } of answers) parts.push(question, answer);
  const kept: string[] = [];
  let count = 0;
  for (const text of parts) {
    const separator = kept.length > 0 ? 1 : 0;
    const left = TRANSFER_SUMMARY_MAX_CHARS - count - separator;
    if (left < 2) break;
    const part = boundedSummary(text, left);
    if (!part) continue;
    kept.push(part);
    count += separator + [...part].length;
    if (part.endsWith(ELLIPSIS) && count >= TRANSFER_SUMMARY_MAX_CHARS) break;
  }
  return kept.length > 0 ? kept.join(' ') : null;
}
