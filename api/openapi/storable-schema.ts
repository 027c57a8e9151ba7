type JsonObject = Record<string, unknown>;

/** A string without U+0000. (Unpaired surrogates cannot be written in a JSON Schema pattern; the description says it.) */
const NO_NUL = '^[^\\u0000]*$';

const STORABLE_JSON_REF = '#/components/schemas/StorableJson';

/**
 * Any JSON value the service can store: the rule of api/http/storable-input.ts for free-form values
 * (lead fields, contact metadata, node outputs), so that the description promises no value the API refuses.
 */
export const storableJsonSchema: JsonObject = {
  description:
    'Any JSON value, except what PostgreSQL cannot store: no string or object key with U+0000 or an unpaired surrogate, no number beyond a double, no nesting deeper than 32 levels.',
  anyOf: [
    { type: 'string', pattern: NO_NUL },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'null' },
    { type: 'array', items: { $ref: STORABLE_JSON_REF } },
    { type: 'object', propertyNames: { pattern: NO_NUL }, additionalProperties: { $ref: STORABLE_JSON_REF } },
  ],
};

const SHAPING = ['type', '$ref', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', 'not'];

/**
 * A request schema (body, query or path) with the storable-input rule written in: strings without NUL,
 * free-form values as StorableJson, object keys without NUL, and members a schema lets through
 * unnamed held to the same rule. The API refuses the rest whatever the route (400 invalid_body).
 */
export function withStorableInput(schema: JsonObject): JsonObject {
  if (!SHAPING.some((keyword) => keyword in schema)) return { ...schema, $ref: STORABLE_JSON_REF };
  const result: JsonObject = { ...schema };
  if (result.type === 'string' && !('pattern' in result) && !('enum' in result) && !('const' in result))
    result.pattern = NO_NUL;
  if (result.type === 'object') {
    result.propertyNames = { pattern: NO_NUL, ...(result.propertyNames as JsonObject | undefined) };
    if (!('additionalProperties' in result)) result.additionalProperties = { $ref: STORABLE_JSON_REF };
  }
  for (const keyword of ['items', 'additionalProperties', 'propertyNames', 'not']) {
    const child = result[keyword];
    if (child && typeof child === 'object' && !Array.isArray(child))
      result[keyword] = withStorableInput(child as JsonObject);
  }
  for (const keyword of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
    if (Array.isArray(result[keyword])) result[keyword] = (result[keyword] as JsonObject[]).map(withStorableInput);
  }
  if (result.properties) {
    result.properties = Object.fromEntries(
      Object.entries(result.properties as JsonObject).map(([name, child]) => [
        name,
        withStorableInput(child as JsonObject),
      ]),
    );
  }
  return result;
}
