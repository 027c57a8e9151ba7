import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildOpenApi } from '../api/openapi/build-openapi';
import { declaredResponses } from '../api/openapi/declared-responses';
import { routes } from '../api/routes';
import { atLeastCodePoints, atMostCodePoints, exactlyCodePoints } from '../lib/code-point-length';
import { routeStringSchemas, stringSchemasIn, type StringSite } from './support/zod-strings';

/** U+1F600: one code point, as JSON Schema's maxLength counts; two UTF-16 code units, as zod's .max counts. */
const ASTRAL = '😀';

/**
 * Caps kept in UTF-16 code units on purpose, and why: each protects a limit Meta counts so (as the WhatsApp twin,
 * simulators/meta-twin/server.ts, models it), and its description says so. Anything else counts code points.
 */
const UTF16_CAPS: Record<string, string> = {
  'POST /whatsapp/messages body.text': "sent to Meta as it is; Meta's 4096 is counted in UTF-16 units",
  'POST /whatsapp/templates body.body': "sent to Meta as it is; Meta's 1024 is counted in UTF-16 units",
};

type JsonObject = Record<string, unknown>;
const document = buildOpenApi(routes) as {
  paths: Record<string, Record<string, Record<string, any>>>;
  components: JsonObject;
};
const sites = routeStringSchemas(routes);

/** The string's bounds as the description publishes them (its JSON Schema). */
function publishedBounds(schema: z.core.$ZodType): { maxLength?: number; minLength?: number } {
  const { maxLength, minLength } = z.toJSONSchema(schema as z.ZodType, { io: 'input', unrepresentable: 'any' });
  return { maxLength, minLength };
}

/** The length issues (too_big, too_small) the schema raises for a value; other issues (a pattern) are not its length's. */
const lengthIssues = (schema: z.core.$ZodType, value: string) =>
  (z.safeParse(schema, value).error?.issues ?? [])
    .map((issue) => issue.code)
    .filter((code) => code === 'too_big' || code === 'too_small');

/** Where the schema counts its published bounds otherwise than in code points; empty when it counts as published. */
function lengthProblems(schema: z.core.$ZodType): string[] {
  const { maxLength, minLength } = publishedBounds(schema);
  const problems: string[] = [];
  if (maxLength !== undefined) {
    if (lengthIssues(schema, ASTRAL.repeat(maxLength)).length)
      problems.push(`refuses ${maxLength} astral code points (maxLength ${maxLength})`);
    if (!lengthIssues(schema, ASTRAL.repeat(maxLength + 1)).includes('too_big'))
      problems.push(`takes ${maxLength + 1} astral code points (maxLength ${maxLength})`);
  }
  if (minLength !== undefined && minLength > 0) {
    if (lengthIssues(schema, ASTRAL.repeat(minLength)).length)
      problems.push(`refuses ${minLength} astral code points (minLength ${minLength})`);
    if (!lengthIssues(schema, ASTRAL.repeat(minLength - 1)).includes('too_small'))
      problems.push(`takes ${minLength - 1} astral code points (minLength ${minLength})`);
  }
  return problems;
}

/** Each string schema once, with the first place it is used. */
function distinctSchemas(all: readonly StringSite[]): StringSite[] {
  const first = new Map<z.core.$ZodType, StringSite>();
  for (const site of all) if (!first.has(site.schema)) first.set(site.schema, site);
  return [...first.values()];
}

describe("the routes' string caps count what the OpenAPI description's maxLength and minLength count", () => {
  it('takes maxLength code points beyond U+FFFF and refuses one more (and so for minLength), in every route schema', () => {
    const capped = distinctSchemas(sites).filter((site) => {
      const { maxLength, minLength } = publishedBounds(site.schema);
      return maxLength !== undefined || (minLength ?? 0) > 1;
    });
    expect(capped.length, 'route schemas publish capped strings').toBeGreaterThan(100);
    const problems = capped
      .filter((site) => !(site.where in UTF16_CAPS))
      .flatMap((site) => lengthProblems(site.schema).map((problem) => `${site.where}: ${problem}`));
    expect(problems, 'use atMostCodePoints/atLeastCodePoints (lib/code-point-length.ts), not zod .max/.min').toEqual(
      [],
    );
  });

  it('refuses what is not a string at every capped string, as invalid input, never by throwing (the fuzzer sent [null, null])', () => {
    const capped = distinctSchemas(sites).filter((site) => {
      const { maxLength, minLength } = publishedBounds(site.schema);
      return maxLength !== undefined || (minLength ?? 0) > 0;
    });
    const notStrings: unknown[] = [[null, null], ['a', 'b', 'c'], Array(5000).fill(0), 12, { length: 3 }, true];
    const problems = capped.flatMap((site) =>
      notStrings.flatMap((value) => {
        try {
          const result = z.safeParse(site.schema, value);
          return result.success && value !== undefined ? [`${site.where}: takes ${JSON.stringify(value)}`] : [];
        } catch (error) {
          return [`${site.where}: throws ${(error as Error).message} on ${JSON.stringify(value).slice(0, 40)}`];
        }
      }),
    );
    expect(problems).toEqual([]);
  });

  it("catches zod's own UTF-16 .max, .min and .length, and takes the code-point checks in any chain", () => {
    expect(lengthProblems(z.string().max(3))).toEqual([expect.stringContaining('refuses 3 astral')]);
    expect(lengthProblems(z.string().min(2))).toEqual([expect.stringContaining('takes 1 astral')]);
    expect(lengthProblems(z.string().length(2))).toHaveLength(3);
    const chained = z
      .string()
      .trim()
      .min(1)
      .check(atLeastCodePoints(2), atMostCodePoints(3))
      .regex(/^\S+$/u)
      .nullable()
      .optional()
      .describe('A chain as the routes write one.');
    expect(lengthProblems(chained)).toEqual([]);
    expect(lengthProblems(z.string().check(exactlyCodePoints(2)))).toEqual([]);
    expect(chained.parse(`  ${ASTRAL.repeat(3)}  `)).toBe(ASTRAL.repeat(3));
    expect(chained.parse(null)).toBeNull();
  });

  it("describes a code-point cap as zod's max, min and length are described, and refuses with the same issue", () => {
    const pairs: Array<[z.ZodType, z.ZodType]> = [
      [
        z.string().trim().min(1).max(200).optional().describe('d'),
        z.string().trim().min(1).check(atMostCodePoints(200)).optional().describe('d'),
      ],
      [z.string().min(2).max(35).nullable(), z.string().check(atLeastCodePoints(2), atMostCodePoints(35)).nullable()],
      [z.string().length(4), z.string().check(exactlyCodePoints(4))],
    ];
    for (const [utf16, codePoints] of pairs) {
      expect(z.toJSONSchema(codePoints)).toEqual(z.toJSONSchema(utf16));
      for (const ascii of ['', 'a', 'abcd', 'x'.repeat(300)])
        expect(codePoints.safeParse(ascii).error?.issues).toEqual(utf16.safeParse(ascii).error?.issues);
    }
    const message = z.string().check(atLeastCodePoints(8, 'must be a token')).safeParse('short').error?.issues[0];
    expect(message).toMatchObject({ code: 'too_small', minimum: 8, message: 'must be a token' });
  });

  it('keeps the UTF-16 caps listed above in UTF-16, and their description says so', () => {
    for (const [where, why] of Object.entries(UTF16_CAPS)) {
      const site = sites.find((candidate) => candidate.where === where);
      expect(site, `${where} (${why}) is a route's string`).toBeDefined();
      const { maxLength } = publishedBounds(site!.schema);
      expect(maxLength, where).toBeGreaterThan(0);
      expect(lengthIssues(site!.schema, 'a'.repeat(maxLength!)), where).toEqual([]);
      expect(lengthIssues(site!.schema, ASTRAL.repeat(maxLength! / 2 + 1)), where).toEqual(['too_big']);
      const [method, path, field] = where.split(' ') as [string, string, string];
      const published = field
        .replace(/^body\./, '')
        .split('.')
        .reduce<JsonObject>(
          (schema, property) => (schema.properties as Record<string, JsonObject>)[property]!,
          document.paths[path]![method.toLowerCase()]!.requestBody.content['application/json'].schema,
        );
      expect(published.description, where).toContain('UTF-16');
    }
  });

  it("reaches every string bound each route's description publishes (so the first test misses none)", () => {
    const components = document.components.schemas as Record<string, unknown>;
    /** maxLength and minLength of the description's strings under value, through its shared schemas but Error's. */
    const publishedIn = (value: unknown, found: string[], followed: Set<string>): string[] => {
      if (Array.isArray(value)) value.forEach((item) => publishedIn(item, found, followed));
      else if (value && typeof value === 'object') {
        const node = value as JsonObject;
        const ref = typeof node.$ref === 'string' ? node.$ref.replace('#/components/schemas/', '') : undefined;
        if (ref && ref !== 'Error' && !followed.has(ref)) {
          followed.add(ref);
          publishedIn(components[ref], found, followed);
        }
        if (node.type === 'string' && typeof node.maxLength === 'number') found.push(`max ${node.maxLength}`);
        if (node.type === 'string' && typeof node.minLength === 'number') found.push(`min ${node.minLength}`);
        Object.values(node).forEach((child) => publishedIn(child, found, followed));
      }
      return found;
    };
    for (const route of routes) {
      const walked = [
        ...(route.params ? stringSchemasIn(route.params, '') : []),
        ...(route.query ? stringSchemasIn(route.query, '') : []),
        ...(route.body ? stringSchemasIn(route.body, '') : []),
        ...Object.values(declaredResponses(route)).flatMap((response) =>
          response.schema && !response.errorCodes ? stringSchemasIn(response.schema, '') : [],
        ),
      ].flatMap(({ schema }) => {
        const bag = schema._zod.bag as { minimum?: number; maximum?: number };
        return [
          ...(typeof bag.maximum === 'number' ? [`max ${bag.maximum}`] : []),
          ...(typeof bag.minimum === 'number' ? [`min ${bag.minimum}`] : []),
        ];
      });
      const published = publishedIn(document.paths[route.path]![route.method], [], new Set());
      expect(walked.sort(), `${route.method.toUpperCase()} ${route.path}`).toEqual(published.sort());
    }
  });
});
