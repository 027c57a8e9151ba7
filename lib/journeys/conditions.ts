import type { VariableType } from './descriptor';
import type { BranchData, Condition } from './node-data';
import { resolvePath } from './render';

export type { BranchData, Condition };

export const CONDITION_OPERATORS_BY_TYPE: Record<VariableType, string[]> = {
  string: ['equals', 'not_equals', 'contains', 'starts_with', 'in', 'is_empty', 'is_not_empty'],
  number: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'is_empty', 'is_not_empty'],
  boolean: ['is_true', 'is_false'],
  datetime: ['before', 'after', 'is_empty', 'is_not_empty'],
  enum: ['equals', 'not_equals', 'in'],
  object: ['is_empty', 'is_not_empty'],
  array: ['is_empty', 'is_not_empty'],
};

type ValueKind = 'none' | 'scalar' | 'text' | 'list' | 'number' | 'instant';

/** What each operator compares against, which decides both its check and its evaluation. */
const VALUE_KIND: Record<string, ValueKind> = {
  equals: 'scalar',
  not_equals: 'scalar',
  contains: 'text',
  starts_with: 'text',
  in: 'list',
  is_empty: 'none',
  is_not_empty: 'none',
  is_true: 'none',
  is_false: 'none',
  eq: 'number',
  neq: 'number',
  gt: 'number',
  gte: 'number',
  lt: 'number',
  lte: 'number',
  before: 'instant',
  after: 'instant',
};

const VALUE_NEEDED: Record<ValueKind, string> = {
  none: 'takes no value',
  scalar: 'needs a single value',
  text: 'needs text as value',
  list: 'needs a non-empty list of values',
  number: 'needs a number as value',
  instant: 'needs an ISO 8601 date, or date-time with offset, as value',
};

/** The condition's variable path, without the '?' that allows it to be unset. */
export function conditionPath(condition: Condition): string {
  return condition.variable.endsWith('?') ? condition.variable.slice(0, -1) : condition.variable;
}

/** The first rule that matches decides; none matching takes the default. */
export function chooseBranch(data: BranchData, variables: Record<string, unknown>): string {
  return data.rules.find((rule) => evaluateCondition(rule.when, variables))?.handle ?? data.defaultHandle;
}

/**
 * Whether the condition holds on the run's variables. Missing or mistyped values match nothing but
 * the negative operators (not_equals, neq, is_empty), so a run never fails on a condition.
 */
export function evaluateCondition(condition: Condition, variables: Record<string, unknown>): boolean {
  const actual = resolvePath(variables, conditionPath(condition));
  const expected = condition.value;
  switch (condition.operator) {
    case 'equals':
      return isScalar(actual) && isScalar(expected) && String(actual) === String(expected);
    case 'not_equals':
      return !(isScalar(actual) && isScalar(expected) && String(actual) === String(expected));
    case 'contains':
      return isScalar(actual) && typeof expected === 'string' && String(actual).includes(expected);
    case 'starts_with':
      return isScalar(actual) && typeof expected === 'string' && String(actual).startsWith(expected);
    case 'in':
      return isScalar(actual) && Array.isArray(expected) && expected.includes(String(actual));
    case 'is_empty':
      return isEmpty(actual);
    case 'is_not_empty':
      return !isEmpty(actual);
    case 'is_true':
      return actual === true || (typeof actual === 'string' && actual.trim().toLowerCase() === 'true');
    case 'is_false':
      return actual === false || (typeof actual === 'string' && actual.trim().toLowerCase() === 'false');
    case 'eq':
      return compareNumbers(actual, expected, (a, b) => a === b);
    case 'neq':
      return !compareNumbers(actual, expected, (a, b) => a === b);
    case 'gt':
      return compareNumbers(actual, expected, (a, b) => a > b);
    case 'gte':
      return compareNumbers(actual, expected, (a, b) => a >= b);
    case 'lt':
      return compareNumbers(actual, expected, (a, b) => a < b);
    case 'lte':
      return compareNumbers(actual, expected, (a, b) => a <= b);
    case 'before':
      return compareInstants(actual, expected, (a, b) => a < b);
    case 'after':
      return compareInstants(actual, expected, (a, b) => a > b);
    default:
      return false;
  }
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

/** Lead fields often arrive as text, so "42" compares as 42; anything else is not a number. */
function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string' || value.trim() === '') return null;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : null;
}

function compareNumbers(actual: unknown, expected: unknown, compare: (a: number, b: number) => boolean): boolean {
  const a = toNumber(actual);
  const b = toNumber(expected);
  return a !== null && b !== null && compare(a, b);
}

// A date-time without an offset would be read in the host's time zone; only unambiguous instants count.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

function toInstant(value: unknown): number | null {
  if (typeof value !== 'string' || !ISO_INSTANT.test(value)) return null;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? null : parsed;
}

function compareInstants(actual: unknown, expected: unknown, compare: (a: number, b: number) => boolean): boolean {
  const a = toInstant(actual);
  const b = toInstant(expected);
  return a !== null && b !== null && compare(a, b);
}

/**
 * What is wrong with a condition on a variable of this type (undefined: a path below an open
 * object, whose type is only known at run time), or null.
 */
export function conditionProblem(
  condition: Condition,
  variable?: { type: VariableType; allowedValues: string[] },
): string | null {
  const { operator, value } = condition;
  const kind = Object.hasOwn(VALUE_KIND, operator) ? VALUE_KIND[operator]! : undefined;
  if (kind === undefined) return `unknown operator "${operator}"`;
  if (variable && !CONDITION_OPERATORS_BY_TYPE[variable.type].includes(operator)) {
    return `operator "${operator}" does not apply to ${conditionPath(condition)} (${variable.type}); use one of ${CONDITION_OPERATORS_BY_TYPE[variable.type].join(', ')}`;
  }
  if (!valueFits(kind, value)) return `operator "${operator}" ${VALUE_NEEDED[kind]}`;
  if (variable?.type === 'enum') {
    const stray = (Array.isArray(value) ? value : [String(value)]).find(
      (candidate) => !variable.allowedValues.includes(candidate),
    );
    if (stray !== undefined)
      return `"${stray}" is not a value of ${conditionPath(condition)}; use one of ${variable.allowedValues.join(', ')}`;
  }
  return null;
}

function valueFits(kind: ValueKind, value: Condition['value']): boolean {
  switch (kind) {
    case 'none':
      return value === undefined;
    case 'scalar':
      return isScalar(value);
    case 'text':
      return typeof value === 'string' && value !== '';
    case 'list':
      return Array.isArray(value) && value.length > 0;
    case 'number':
      return toNumber(value) !== null;
    case 'instant':
      return toInstant(value) !== null;
  }
}
