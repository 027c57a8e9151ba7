import { z } from 'zod';

/**
 * String length caps counted as the OpenAPI description (JSON Schema's maxLength/minLength) counts them: in Unicode
 * code points, an emoji once. zod's own `.max(n)`, `.min(n)` and `.length(n)` count UTF-16 code units, an emoji twice,
 * so a route would refuse 200 emoji its description allows (the fuzzer found it on GET /whatsapp/webhook).
 *
 * Each is zod's own length check with its count replaced: it records its bound where zod's does, so the generated
 * description is the same maxLength/minLength as before, and it raises the same too_big/too_small issue, so clients
 * read the same error. Use it in any chain, after `.trim()` when the cap applies to the trimmed text:
 * `z.string().trim().min(1).check(atMostCodePoints(200)).optional()`. `.min(1)` needs no replacing (empty is empty
 * in both counts); a bound above 1 does. A cap that protects a limit counted in UTF-16 units or bytes downstream
 * keeps zod's `.max(n)`, with the reason next to it (test/openapi-string-lengths.test.ts lists those).
 */

/** Code points in text: its UTF-16 units less one per surrogate pair. Stops counting once over `limit`. */
export function countCodePoints(text: string, limit = Number.POSITIVE_INFINITY): number {
  let count = 0;
  for (let index = 0; index < text.length && count <= limit; index++) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index++;
    }
    count++;
  }
  return count;
}

type MaxLengthCheck = z.core.$ZodCheckMaxLength<string>;
type MinLengthCheck = z.core.$ZodCheckMinLength<string>;
type LengthEqualsCheck = z.core.$ZodCheckLengthEquals<string>;

const $AtMostCodePoints = z.core.$constructor<MaxLengthCheck>('AtMostCodePoints', (inst, def) => {
  z.core.$ZodCheckMaxLength.init(inst, def);
  inst._zod.check = (payload) => {
    const input = payload.value;
    // zod runs a length check on anything with a length, an array too, even after the string type was refused: only
    // a string is counted (the type's issue already says what is wrong with the rest).
    if (typeof input !== 'string') return;
    // At most `maximum` units is at most `maximum` code points: only a longer text is counted.
    if (input.length <= def.maximum || countCodePoints(input, def.maximum) <= def.maximum) return;
    payload.issues.push({
      origin: 'string',
      code: 'too_big',
      maximum: def.maximum,
      inclusive: true,
      input,
      inst,
      continue: !def.abort,
    });
  };
});

const $AtLeastCodePoints = z.core.$constructor<MinLengthCheck>('AtLeastCodePoints', (inst, def) => {
  z.core.$ZodCheckMinLength.init(inst, def);
  inst._zod.check = (payload) => {
    const input = payload.value;
    // zod runs a length check on anything with a length, an array too, even after the string type was refused: only
    // a string is counted (the type's issue already says what is wrong with the rest).
    if (typeof input !== 'string') return;
    // Fewer units than `minimum` is fewer code points: only a text long enough in units is counted.
    if (input.length >= def.minimum && countCodePoints(input, def.minimum) >= def.minimum) return;
    payload.issues.push({
      origin: 'string',
      code: 'too_small',
      minimum: def.minimum,
      inclusive: true,
      input,
      inst,
      continue: !def.abort,
    });
  };
});

const $ExactlyCodePoints = z.core.$constructor<LengthEqualsCheck>('ExactlyCodePoints', (inst, def) => {
  z.core.$ZodCheckLengthEquals.init(inst, def);
  inst._zod.check = (payload) => {
    const input = payload.value;
    // zod runs a length check on anything with a length, an array too, even after the string type was refused: only
    // a string is counted (the type's issue already says what is wrong with the rest).
    if (typeof input !== 'string') return;
    const count = countCodePoints(input, def.length);
    if (count === def.length) return;
    const tooBig = count > def.length;
    payload.issues.push({
      origin: 'string',
      ...(tooBig ? { code: 'too_big', maximum: def.length } : { code: 'too_small', minimum: def.length }),
      inclusive: true,
      exact: true,
      input,
      inst,
      continue: !def.abort,
    });
  };
});

/** At most `maximum` code points; described as maxLength. Replaces zod's `.max(maximum)` on a string. */
export const atMostCodePoints = (maximum: number, params?: string | z.core.$ZodCheckMaxLengthParams): MaxLengthCheck =>
  new $AtMostCodePoints({ check: 'max_length', ...z.core.util.normalizeParams(params), maximum });

/** At least `minimum` code points; described as minLength. Replaces zod's `.min(minimum)` on a string when above 1. */
export const atLeastCodePoints = (minimum: number, params?: string | z.core.$ZodCheckMinLengthParams): MinLengthCheck =>
  new $AtLeastCodePoints({ check: 'min_length', ...z.core.util.normalizeParams(params), minimum });

/** Exactly `length` code points; described as minLength and maxLength. Replaces zod's `.length(length)` on a string. */
export const exactlyCodePoints = (
  length: number,
  params?: string | z.core.$ZodCheckLengthEqualsParams,
): LengthEqualsCheck =>
  new $ExactlyCodePoints({ check: 'length_equals', ...z.core.util.normalizeParams(params), length });

/** Whether a length check counts code points (one of the above) rather than zod's UTF-16 units. */
export const countsCodePoints = (check: z.core.$ZodCheck<never>): boolean =>
  check instanceof $AtMostCodePoints || check instanceof $AtLeastCodePoints || check instanceof $ExactlyCodePoints;
