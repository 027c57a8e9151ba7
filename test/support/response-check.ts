import { isDeepStrictEqual } from 'node:util';
import type { z } from 'zod';
import { matchRoute, type RouteDefinition } from '../../api/http/route';
import { declaredResponses, unroutedResponses, type DeclaredResponse } from '../../api/openapi/declared-responses';

export interface SentResponse {
  status: number;
  headers: Headers;
  body: Uint8Array;
}

/** Media types whose bodies are text a schema can read; others (XLSX) are checked by type alone. */
const TEXT_TYPES = /^(text\/|application\/(json|javascript|x-ndjson)$)/;

const mediaTypeOf = (contentType: string | null) => contentType?.split(';')[0]!.trim().toLowerCase() ?? null;

/** The first place where what was sent and what its schema makes of it differ: a member the schema does not declare, or a value it changes. */
function firstDifference(sent: unknown, read: unknown, path: string[] = []): string {
  if (sent && read && typeof sent === 'object' && typeof read === 'object') {
    const keys = new Set([...Object.keys(sent), ...Object.keys(read)]);
    for (const key of keys) {
      const [a, b] = [(sent as Record<string, unknown>)[key], (read as Record<string, unknown>)[key]];
      if (!isDeepStrictEqual(a, b)) return firstDifference(a, b, [...path, key]);
    }
  }
  return `${path.join('.') || '(the body)'}: sent ${JSON.stringify(sent)}, the schema reads ${JSON.stringify(read)}`;
}

const NDJSON = 'application/x-ndjson';

/** A newline-delimited JSON answer: every line (each ended by a newline) is one event its schema reads as sent. */
function ndjsonProblems(schema: z.ZodType, text: string): string[] {
  if (text && !text.endsWith('\n')) return ['the last NDJSON line is not ended by a newline'];
  return text
    .split('\n')
    .slice(0, -1)
    .flatMap((line, index) => {
      let sent: unknown;
      try {
        sent = JSON.parse(line);
      } catch {
        return [`line ${index + 1} is not JSON: ${line.slice(0, 200)}`];
      }
      const read = schema.safeParse(sent);
      if (!read.success)
        return read.error.issues.map((issue) => `line ${index + 1}.${issue.path.join('.')}: ${issue.message}`);
      return isDeepStrictEqual(sent, read.data) ? [] : [`line ${index + 1}: ${firstDifference(sent, read.data)}`];
    });
}

function bodyProblems(declared: DeclaredResponse, response: SentResponse, method: string): string[] {
  if (method === 'HEAD') return [];
  const mediaType = mediaTypeOf(response.headers.get('content-type'));
  if (!declared.schema) {
    return response.body.length ? [`a body was sent (${mediaType}) where none is declared`] : [];
  }
  const declaredTypes = [declared.contentType ?? 'application/json'].flat();
  if (!mediaType || !declaredTypes.includes(mediaType))
    return [`Content-Type ${mediaType} is not the declared ${declaredTypes.join(' or ')}`];
  if (!TEXT_TYPES.test(mediaType)) return [];
  const text = new TextDecoder().decode(response.body);
  if (mediaType === NDJSON) return ndjsonProblems(declared.schema as z.ZodType, text);
  let sent: unknown = text;
  if (mediaType === 'application/json') {
    try {
      sent = JSON.parse(text);
    } catch {
      return [`the body is not JSON: ${text.slice(0, 200)}`];
    }
  }
  const read = (declared.schema as z.ZodType).safeParse(sent);
  if (!read.success) return read.error.issues.map((issue) => `body.${issue.path.join('.')}: ${issue.message}`);
  return isDeepStrictEqual(sent, read.data)
    ? []
    : [`the body is not exactly what its schema describes: ${firstDifference(sent, read.data)}`];
}

/**
 * Every way a response can differ from what its route declares (api/openapi/declared-responses.ts, the
 * source of the OpenAPI description too): a status not declared, a declared header missing, a body that
 * is not of the declared media type, fails the declared zod schema, or carries members the schema does
 * not declare. Requests no route takes are held to the declared 404/405 answers.
 */
export function responseProblems(
  routes: readonly RouteDefinition[],
  method: string,
  url: string,
  response: SentResponse,
): string[] {
  const match = matchRoute(routes, method, new URL(url).pathname);
  const declared = match.route ? declaredResponses(match.route) : unroutedResponses(match.allowed !== null);
  const answer = declared[response.status];
  if (!answer) return [`status ${response.status} is not declared (declared: ${Object.keys(declared).join(', ')})`];
  const headers = ['X-Request-Id', ...(answer.headers ?? [])]
    .filter((name) => !response.headers.has(name))
    .map((name) => `header ${name} is missing`);
  return [...headers, ...bodyProblems(answer, response, method.toUpperCase())];
}
