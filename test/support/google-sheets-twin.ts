import {
  createGoogleSheetsTwin,
  type GoogleSheetsTwinOptions,
  type TwinWrite,
} from '../../simulators/google-twin/server';
import { createSign } from 'node:crypto';
import { afterAll, expect } from 'vitest';

/** A service account key as the twin issues it (the shape the Google Cloud console downloads). */
export interface TwinKey {
  client_email: string;
  private_key: string;
  token_uri: string;
  [member: string]: unknown;
}

export interface TwinTab {
  title: string;
  rowCount: number;
  columnCount: number;
  values: (string | number | boolean)[][];
}

/** The Google Sheets twin in this test process on a free port, closed after the file; its control routes as calls. */
export async function startGoogleSheetsTwin(options: GoogleSheetsTwinOptions = {}) {
  const twin = createGoogleSheetsTwin(options);
  const url = await twin.listen(0);
  afterAll(() => twin.close());
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  return {
    url,
    /** The Sheets API root as the client takes it (rootUrl, ending with /). */
    rootUrl: `${url}/`,
    serviceAccount: async (clientEmail?: string) =>
      (await post('/control/service-accounts', { clientEmail })) as TwinKey,
    /** A spreadsheet the customer made (Google assigns its id) and shared with these e-mails. */
    spreadsheet: async (sharedWith: string[], tabs?: string[]) =>
      (await post('/control/spreadsheets', { sharedWith, tabs })).spreadsheetId as string,
    /** A calendar the customer shares with these accounts (Calendar API v3: docs/features/calendar-twins.md#credentials). */
    calendar: (
      calendarId: string,
      timeZone: string,
      sharedWith: { email: string; role: 'freeBusyReader' | 'reader' | 'writer' | 'owner' }[],
    ) => post('/control/calendars', { calendarId, timeZone, sharedWith }),
    faults: (faults: {
      quotaEvery?: number | null;
      retryAfterSeconds?: number | null;
      dropAnswerEvery?: number | null;
    }) => post('/control/faults', faults),
    async tabs(spreadsheetId: string): Promise<TwinTab[]> {
      const response = await fetch(`${url}/control/spreadsheets/${spreadsheetId}`);
      return ((await response.json()) as { tabs: TwinTab[] }).tabs;
    },
    writes: (): TwinWrite[] => twin.writes(),
  };
}

export type TestGoogleSheetsTwin = Awaited<ReturnType<typeof startGoogleSheetsTwin>>;

/** The most writes of an account any window of `windowMs` held (accepted ones: what Google counts). */
export function busiestWindow(writes: TwinWrite[], account: string, windowMs: number): number {
  const times = writes
    .filter((write) => write.account === account && write.outcome === 'accepted')
    .map((write) => write.at)
    .sort((a, b) => a - b);
  let most = 0;
  for (let start = 0, end = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/**
 * An access token of the twin, asked for as the JWT bearer grant (RFC 7523) with the account's key, as Google's
 * clients ask: the assertion's audience Google's token URL (the twin takes it) unless given, `subject` for domain-wide
 * delegation.
 */
export async function twinAccessToken(
  tokenUrl: string,
  key: TwinKey,
  scopes: string[],
  options: { audience?: string; subject?: string } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${part({ alg: 'RS256', typ: 'JWT' })}.${part({
    iss: key.client_email,
    scope: scopes.join(' '),
    aud: options.audience ?? 'https://oauth2.googleapis.com/token',
    iat: now,
    exp: now + 3600,
    ...(options.subject ? { sub: options.subject } : {}),
  })}`;
  const signature = createSign('RSA-SHA256').update(unsigned).sign(key.private_key, 'base64url');
  const response = await fetch(tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: `${unsigned}.${signature}`,
    }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}
