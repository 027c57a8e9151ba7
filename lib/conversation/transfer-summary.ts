/**
 * What a warm transfer's human hears before the lead is bridged (docs/features/conversation/tools.md#warm-transfer):
 * the model's `summary` argument, or for the script engine a summary composed from why the lead asked for a person and
 * the script's answers so far. Tenant text (a lead's words, a model's argument), so bounded: at most
 * TRANSFER_SUMMARY_MAX_CHARS code points, made in one pass that stops at the cap (docs/hostile-input.md).
 */

/** A summary's cap in code points: about 40 seconds said, what a colleague listens to before taking the call. */
export const TRANSFER_SUMMARY_MAX_CHARS = 600;

const ELLIPSIS = '…';

/**
 * The text with its whitespace runs made one space, trimmed, and cut at `max` code points (an ellipsis ending a cut
 * one); null when nothing is left. Reads at most what it keeps: linear in the cap, whatever the text's length.
 */
export function boundedSummary(text: string, max = TRANSFER_SUMMARY_MAX_CHARS): string | null {
  let out = '';
  let count = 0;
  let space = false;
  for (const char of text) {
    if (/\s/.test(char)) {
      space = count > 0;
      continue;
    }
    if (count + (space ? 1 : 0) >= max) return `${out.slice(0, out.length - (out.endsWith(' ') ? 1 : 0))}${ELLIPSIS}`;
    if (space) {
      out += ' ';
      count += 1;
      space = false;
    }
    out += char;
    count += 1;
  }
  return out === '' ? null : out;
}

/** One of the script's questions and the lead's answer to it. */
export interface ScriptAnswer {
  question: string;
  answer: string;
}

/**
 * The script engine's summary: why the lead asked for a person (`reason`, e.g. `Ana asked to speak to a person: "..."`),
 * then the answers given so far, question by question, until the cap. Each part is bounded before it is joined, so the
 * work is linear in the cap times the parts kept.
 */
export function scriptTransferSummary(reason: string, answers: readonly ScriptAnswer[]): string | null {
  let summary = boundedSummary(reason) ?? '';
  for (const [index, { question, answer }] of answers.entries()) {
    const left = TRANSFER_SUMMARY_MAX_CHARS - [...summary].length;
    if (left <= 1) break;
    const part = boundedSummary(`${index === 0 ? 'Answers so far: ' : ''}${question} ${answer}`, left - 1);
    if (!part) continue;
    summary = summary ? `${summary} ${part}` : part;
    if (part.endsWith(ELLIPSIS)) break;
  }
  return boundedSummary(summary);
}
