// Conformance to AWS's published Smithy model of a service (vendor/smithy/<service>/, cut by
// scripts/cut-smithy-model.ts): what a twin answers and what the SDK sends, held to the shapes of the model as the
// restJson1 protocol carries them (members bound to headers, query, labels or the payload are not in the JSON body).
// Like test/support/carrier-openapi.ts, every check answers a list of problems, empty when the value fits.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CUTS } from '../../scripts/cut-smithy-model';
import { projectRoot } from '../../scripts/stack/paths';

interface Shape {
  type: string;
  members?: Record<string, { target: string; traits?: Record<string, unknown> }>;
  member?: { target: string };
  key?: { target: string };
  value?: { target: string };
  input?: { target: string };
  output?: { target: string };
  errors?: Array<{ target: string }>;
  traits?: Record<string, unknown>;
}

export interface SmithyModel {
  smithy: string;
  metadata: Record<string, unknown> & { 'x-vendored': Record<string, string> };
  shapes: Record<string, Shape>;
}

const BINDINGS = [
  'smithy.api#httpHeader',
  'smithy.api#httpQuery',
  'smithy.api#httpLabel',
  'smithy.api#httpPayload',
  'smithy.api#httpResponseCode',
];

export function smithyModel(service: keyof typeof CUTS) {
  const cut = CUTS[service]!;
  const model = JSON.parse(
    readFileSync(path.join(projectRoot, 'vendor', 'smithy', service, cut.output), 'utf8'),
  ) as SmithyModel;
  const namespace = cut.service.split('#')[0]!;
  const shapeOf = (id: string) => {
    const shape = model.shapes[id.includes('#') ? id : `${namespace}#${id}`];
    if (!shape) throw new Error(`${id}: not in the vendored model`);
    return shape;
  };

  function problems(id: string, value: unknown, at: string, out: string[]): string[] {
    if (id === 'smithy.api#Unit') return out;
    const shape = shapeOf(id);
    const traits = shape.traits ?? {};
    const length = traits['smithy.api#length'] as { min?: number; max?: number } | undefined;
    const fault = (message: string) => out.push(`${at || '(root)'}: ${message} (${id})`);
    switch (shape.type) {
      case 'string':
      case 'blob':
        if (typeof value !== 'string') return (fault('is not a string'), out);
        if (length?.min !== undefined && [...value].length < length.min) fault(`is shorter than ${length.min}`);
        if (length?.max !== undefined && [...value].length > length.max) fault(`is longer than ${length.max}`);
        return out;
      case 'enum': {
        const values = Object.values(shape.members ?? {}).map((member) => member.traits?.['smithy.api#enumValue']);
        if (!values.includes(value)) fault(`${JSON.stringify(value)} is not one of the enum's values`);
        return out;
      }
      case 'boolean':
        if (typeof value !== 'boolean') fault('is not a boolean');
        return out;
      case 'integer':
      case 'long':
        if (!Number.isInteger(value)) fault('is not an integer');
        return out;
      case 'timestamp':
      case 'float':
      case 'double':
        if (typeof value !== 'number') fault('is not a number');
        return out;
      case 'list':
        if (!Array.isArray(value)) return (fault('is not a list'), out);
        if (length?.min !== undefined && value.length < length.min) fault(`has fewer than ${length.min} items`);
        if (length?.max !== undefined && value.length > length.max) fault(`has more than ${length.max} items`);
        value.forEach((item, index) => problems(shape.member!.target, item, `${at}[${index}]`, out));
        return out;
      case 'map':
        if (!value || typeof value !== 'object' || Array.isArray(value)) return (fault('is not a map'), out);
        for (const [key, item] of Object.entries(value)) problems(shape.value!.target, item, `${at}.${key}`, out);
        return out;
      case 'structure':
        return structureProblems(shape, value, at, out, false);
      default:
        fault(`a ${shape.type} shape is not checked here`);
        return out;
    }
  }

  function structureProblems(shape: Shape, value: unknown, at: string, out: string[], bodyOnly: boolean) {
    if (!value || typeof value !== 'object' || Array.isArray(value))
      return (out.push(`${at || '(root)'}: is not an object`), out);
    const members = Object.entries(shape.members ?? {}).filter(
      ([, member]) => !bodyOnly || !BINDINGS.some((binding) => member.traits?.[binding] !== undefined),
    );
    const known = new Map(members);
    for (const [name, item] of Object.entries(value)) {
      const member = known.get(name);
      if (!member) out.push(`${at}.${name}: is not a member of the shape`);
      else if (item !== null) problems(member.target, item, `${at}.${name}`, out);
    }
    for (const [name, member] of members)
      if (
        member.traits?.['smithy.api#required'] !== undefined &&
        (value as Record<string, unknown>)[name] === undefined
      )
        out.push(`${at}.${name}: is required`);
    return out;
  }

  return {
    model,
    shapeOf,
    /** Problems of `value` as the shape `id` (a whole value, every member). */
    problems: (id: string, value: unknown) => problems(id, value, '', []),
    /** Problems of a restJson1 JSON body as structure `id`: members bound elsewhere (headers, query, payload) left out. */
    bodyProblems: (id: string, body: unknown) => structureProblems(shapeOf(id), body, '', [], true),
    /** An operation's HTTP binding, input, output and error shape names. */
    operation(name: string) {
      const shape = shapeOf(name);
      const http = shape.traits?.['smithy.api#http'] as { method: string; uri: string; code: number };
      return {
        http,
        input: shape.input!.target,
        output: shape.output!.target,
        errors: (shape.errors ?? []).map(({ target }) => target.split('#')[1]!),
      };
    },
    /** An error shape's HTTP status (httpError) and fault (client, server). */
    errorOf(name: string) {
      const traits = shapeOf(name).traits ?? {};
      return { status: traits['smithy.api#httpError'] as number, fault: traits['smithy.api#error'] as string };
    },
    /** The values of an enum shape. */
    enumValues: (id: string) =>
      Object.values(shapeOf(id).members ?? {}).map((member) => member.traits?.['smithy.api#enumValue'] as string),
  };
}
