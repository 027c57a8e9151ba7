// Custom functions over tenant text (lib/functions/, docs/hostile-input.md): a definition's checks, the presets'
// rendering and the answer given to the model, each fed its worst case at its cap.
import { describe, expect, it } from 'vitest';
import {
  FUNCTION_LIMITS,
  functionParametersSchema,
  functionPresetsSchema,
  renderPresets,
} from '../../lib/functions/function-definition';
import { oneLine } from '../../lib/functions/invoke-function';
import { UNCAPPED_CHARS, WORST_CASE_BUDGET_MS, bestTimeMs, repeatedTo } from '../support/hostile-budget';

describe('custom functions on hostile definitions and answers', () => {
  it('a parameters document nested 64 Ki levels deep is refused for its depth, without a stack overflow', () => {
    let nested: unknown = {};
    for (let level = 0; level < UNCAPPED_CHARS; level++) nested = { x: nested };
    const schema = { type: 'object', properties: nested };
    const parsed = functionParametersSchema.safeParse(schema);
    expect(parsed.error?.issues[0]?.message).toMatch(/nest at most/);
    expect(bestTimeMs(() => functionParametersSchema.safeParse(schema))).toBeLessThan(WORST_CASE_BUDGET_MS);
  });

  it('presets at their caps, of {{ that never close, rendered with 64 KiB field values', () => {
    const template = repeatedTo('{{ lead.fields.a ', FUNCTION_LIMITS.presetLength);
    const presets = Object.fromEntries(
      Array.from({ length: FUNCTION_LIMITS.presets }, (_, index) => [`p${index}`, template]),
    );
    expect(bestTimeMs(() => functionPresetsSchema.safeParse(presets))).toBeLessThan(WORST_CASE_BUDGET_MS);
    const rendering = Object.fromEntries(
      Array.from({ length: FUNCTION_LIMITS.presets }, (_, index) => [
        `p${index}`,
        repeatedTo('{{lead.fields.a}}', FUNCTION_LIMITS.presetLength),
      ]),
    );
    const context = {
      callId: 'c',
      leadId: null,
      leadName: null,
      leadPhone: null,
      leadFields: { a: repeatedTo('x', UNCAPPED_CHARS) },
      campaignId: null,
      agentId: null,
    };
    expect(bestTimeMs(() => renderPresets(rendering, context))).toBeLessThan(WORST_CASE_BUDGET_MS);
  });

  it("an endpoint's answer at the 64 KiB it may send, made one capped line", () => {
    const answer = repeatedTo(' \n\t x', FUNCTION_LIMITS.responseBytes);
    expect(Array.from(oneLine(answer)).length).toBeLessThan(FUNCTION_LIMITS.resultLength + 50);
    expect(bestTimeMs(() => oneLine(answer))).toBeLessThan(WORST_CASE_BUDGET_MS);
  });
});
