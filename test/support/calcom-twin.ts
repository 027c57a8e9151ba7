// The Cal.com twin in the test process (docs/features/calendar-twins.md#the-calcom-twin), and a caller of its API v2.
import { afterAll } from 'vitest';
import {
  DEFAULT_EVENT_TYPE,
  DEVELOPMENT_CALCOM_API_KEY,
  type TwinEventType,
} from '../../simulators/calcom-twin/config';
import { createCalcomTwin, type CalcomTwin, type CalcomTwinOptions } from '../../simulators/calcom-twin/server';

export { DEFAULT_EVENT_TYPE, DEVELOPMENT_CALCOM_API_KEY, type TwinEventType };

/** A twin on a free loopback port for the file's tests, closed after them. */
export async function startCalcomTwin(options: CalcomTwinOptions = {}): Promise<{ twin: CalcomTwin; baseUrl: string }> {
  const twin = createCalcomTwin(options);
  const baseUrl = await twin.listen(0);
  afterAll(() => twin.close());
  return { twin, baseUrl };
}

export interface CalcomAnswer {
  status: number;
  contentType: string;
  body: any;
}

/**
 * A request to the twin as Cal.com's documentation shows them: the cal-api-version of the endpoint (slots 2024-09-04,
 * bookings 2024-08-13) and the API key as a Bearer token, each replaceable (null: not sent).
 */
export function calcomClient(baseUrl: string, apiKey: string | null = DEVELOPMENT_CALCOM_API_KEY) {
  return async function call(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string | null> = {},
  ): Promise<CalcomAnswer> {
    const version = path.startsWith('/v2/slots') ? '2024-09-04' : '2024-08-13';
    const sent: Record<string, string> = {};
    for (const [name, value] of Object.entries({
      'cal-api-version': version,
      ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    }))
      if (value !== null) sent[name] = value;
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: sent,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      body: text ? JSON.parse(text) : undefined,
    };
  };
}
