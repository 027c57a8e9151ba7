import {
  createGoogleSheetsTwin,
  type GoogleSheetsTwinOptions,
  type TwinWrite,
} from '../../simulators/google-twin/server';
import { afterAll } from 'vitest';

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
