import { normaliseWords } from './words';

export interface WordErrorRate {
  /** (substitutions + deletions + insertions) / referenceWords; can exceed 1 when the hypothesis adds words. */
  wer: number;
  substitutions: number;
  deletions: number;
  insertions: number;
  referenceWords: number;
  hypothesisWords: number;
}

/**
 * The word error rate of a hypothesis against a reference: the Levenshtein distance between their word
 * sequences (normaliseWords: case and punctuation do not count), each substitution, deletion and insertion
 * costing 1, divided by the number of reference words. Among alignments of the same distance, the counts
 * are those of the first found walking back from the end preferring a match or substitution.
 */
export function wordErrorRate(reference: string, hypothesis: string): WordErrorRate {
  const ref = normaliseWords(reference);
  const hyp = normaliseWords(hypothesis);
  if (ref.length === 0) throw new RangeError('the reference has no words');
  const width = hyp.length + 1;
  // distance[i * width + j]: edits turning ref[0..i) into hyp[0..j).
  const distance = new Uint32Array((ref.length + 1) * width);
  for (let j = 0; j <= hyp.length; j++) distance[j] = j;
  for (let i = 1; i <= ref.length; i++) {
    distance[i * width] = i;
    for (let j = 1; j <= hyp.length; j++) {
      const diagonal = distance[(i - 1) * width + j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1);
      distance[i * width + j] = Math.min(
        diagonal,
        distance[(i - 1) * width + j]! + 1,
        distance[i * width + j - 1]! + 1,
      );
    }
  }
  let substitutions = 0;
  let deletions = 0;
  let insertions = 0;
  let i = ref.length;
  let j = hyp.length;
  while (i > 0 || j > 0) {
    const here = distance[i * width + j]!;
    if (i > 0 && j > 0 && here === distance[(i - 1) * width + j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1)) {
      if (ref[i - 1] !== hyp[j - 1]) substitutions++;
      i--;
      j--;
    } else if (i > 0 && here === distance[(i - 1) * width + j]! + 1) {
      deletions++;
      i--;
    } else {
      insertions++;
      j--;
    }
  }
  return {
    wer: (substitutions + deletions + insertions) / ref.length,
    substitutions,
    deletions,
    insertions,
    referenceWords: ref.length,
    hypothesisWords: hyp.length,
  };
}
