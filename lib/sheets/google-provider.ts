import { auth, sheets, type sheets_v4 } from '@googleapis/sheets';
import type { ExportCell } from '../exports/export-rows';
import { cappedFetch } from '../http/capped-fetch';
import { parseRange } from './a1';
import type { SpreadsheetProvider, ValueRange } from './provider';
import type { SheetWriteLimiter } from './quota';
import { GOOGLE_TOKEN_URL, SHEETS_SCOPE, type ServiceAccountKey } from './service-account-key';

/** Backoff after a 429 without Retry-After: 1 s, 2 s, 4 s ... up to 32 s, for up to 8 attempts of a write. */
export const QUOTA_BACKOFF = { firstMs: 1_000, maxMs: 32_000, attempts: 8 } as const;

/** Why a Google call failed for good: the spreadsheet is not shared, gone, or the key is refused. */
export class GoogleSheetsError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Whether trying again later may work (429 after every attempt, 5xx). */
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

export interface GoogleSpreadsheetOptions {
  /** google, or google-twin: the same code against the twin, recorded under the twin's name. */
  name: 'google' | 'google-twin';
  key: ServiceAccountKey;
  /** The Sheets API root (ending with /): https://sheets.googleapis.com/ or the twin's. */
  rootUrl: string;
  limiter: SheetWriteLimiter;
  /** Called while waiting (for the pace or a backoff), at least every 5 s: the activity heartbeats there. */
  onWait?: () => void;
  backoff?: { firstMs: number; maxMs: number; attempts: number };
  /** How long one request (the token's included) may take before it fails, retryable; default GOOGLE_SHEETS_TIMEOUT_MS. */
  timeoutMs?: number;
  /** The activity's cancellation: a request in flight is aborted at once, and no other is sent. */
  signal?: AbortSignal;
}

/**
 * One request to Google (a write of up to a page of rows, a token) answers in well under a second; 30 s is a hung
 * connection. Past it the request is aborted and fails retryable, so that the activity gives back the sheet's lock
 * and its connection instead of holding them for as long as the socket stays open (docs/features/sheets.md).
 */
export const GOOGLE_SHEETS_TIMEOUT_MS = 30_000;

/**
 * The most of a Google answer read. The provider never reads cell values: its answers are a token (about 1 KB), the
 * tabs' properties (some 300 bytes a tab, at most a few hundred tabs) and the summaries of its writes (a few hundred
 * bytes a range). 1 MiB is ten times the largest; past it the request fails (`EBODYCAP`, retryable like any answer that
 * did not come) instead of filling the worker's memory.
 */
export const GOOGLE_SHEETS_BODY_CAP_BYTES = 1024 * 1024;

/**
 * Every request's `fetch` (the API's and the token's): the platform's, capped. gaxios would otherwise load node-fetch
 * and read an answer whole (its maxContentLength checks a declared Content-Length only).
 */
const sheetsFetch = cappedFetch(GOOGLE_SHEETS_BODY_CAP_BYTES);

interface TabGrid {
  sheetId: number;
  rowCount: number;
  columnCount: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Google's status and Retry-After of a failed call (a GaxiosError), if it is one. */
function failureOf(error: unknown): { status: number; message: string; retryAfterMs?: number } | null {
  const failure = error as {
    status?: number;
    response?: { status?: number; headers?: unknown; data?: { error?: { message?: string } } };
    message?: string;
  };
  const status = failure.status ?? failure.response?.status;
  if (typeof status !== 'number') return null;
  const headers = failure.response?.headers;
  // The client's Headers (node-fetch's, or the platform's) or a plain object.
  const retryAfter =
    typeof (headers as { get?: unknown } | undefined)?.get === 'function'
      ? (headers as { get(name: string): string | null }).get('retry-after')
      : (headers as Record<string, string> | undefined)?.['retry-after'];
  const seconds = retryAfter === null || retryAfter === undefined ? NaN : Number(retryAfter);
  return {
    status,
    message: failure.response?.data?.error?.message ?? failure.message ?? `HTTP ${status}`,
    retryAfterMs: Number.isFinite(seconds) ? seconds * 1000 : undefined,
  };
}

/** RAW values as Google takes them: null would leave the cell as it was, '' empties it. */
const rawRow = (row: ExportCell[]) => row.map((cell) => cell ?? '');

/**
 * The `google` spreadsheet provider (docs/features/sheets.md#the-google-provider): a customer's spreadsheet, shared with
 * a service account's e-mail, written through `@googleapis/sheets` with the account's JSON key (a JWT exchanged at
 * the key's token_uri). Google assigns spreadsheet ids: `create` never makes one, it checks that the attached one is
 * reachable and adds the tab if it lacks it. Every write waits for the account's turn (lib/sheets/quota.ts) and is
 * tried again after a 429 (Retry-After if given, else exponential); a new tab's grid (1,000 × 26) is grown before a
 * write beyond it. Writes are to fixed A1 ranges, never appends: a retried write overwrites the same cells.
 */
export class GoogleSpreadsheetProvider implements SpreadsheetProvider {
  readonly name: 'google' | 'google-twin';
  private readonly api: sheets_v4.Sheets;
  private readonly grids = new Map<string, TabGrid>();
  private readonly backoff: { firstMs: number; maxMs: number; attempts: number };

  constructor(private readonly options: GoogleSpreadsheetOptions) {
    this.name = options.name;
    this.backoff = options.backoff ?? QUOTA_BACKOFF;
    const { key } = options;
    const jwt = new auth.JWT({
      email: key.client_email,
      key: key.private_key,
      keyId: key.private_key_id,
      scopes: [SHEETS_SCOPE],
    });
    // The client asks Google's token endpoint whatever the key says; a twin key's token_uri is honoured here (the twin's
    // own token endpoint). A real connection's is pinned to Google's: never followed wherever a key points.
    if (options.name === 'google-twin' && key.token_uri !== GOOGLE_TOKEN_URL) {
      const tokenUri = new URL(key.token_uri);
      jwt.transporter.interceptors.request.add({
        resolved: (request) => {
          if (String(request.url) === GOOGLE_TOKEN_URL) request.url = tokenUri;
          return Promise.resolve(request);
        },
      });
    }
    // The token request too: the same deadline and the same cancellation as the API's, as the auth client's own
    // defaults (its requests take no per-call options), and no retry of its own.
    jwt.transporter.defaults = {
      ...jwt.transporter.defaults,
      timeout: this.timeoutMs,
      retry: false,
      fetchImplementation: sheetsFetch,
      ...(options.signal && { signal: options.signal }),
    };
    this.api = sheets({ version: 'v4', auth: jwt, rootUrl: options.rootUrl });
  }

  private get timeoutMs() {
    return this.options.timeoutMs ?? GOOGLE_SHEETS_TIMEOUT_MS;
  }

  /** Every call's options: no retry of the client's own (write() decides), the deadline, the cap and the cancellation. */
  private get callOptions() {
    this.options.signal?.throwIfAborted();
    return {
      retry: false,
      timeout: this.timeoutMs,
      fetchImplementation: sheetsFetch,
      ...(this.options.signal && { signal: this.options.signal }),
    };
  }

  private async wait(ms: number) {
    for (let left = ms; left > 0; left -= 5_000) {
      this.options.onWait?.();
      this.options.signal?.throwIfAborted();
      await sleep(Math.min(left, 5_000));
    }
  }

  /** One write request: its turn under the pace, then the call; a 429 waits and takes a new turn. */
  private async write<T>(call: () => Promise<T>): Promise<T> {
    for (let attempt = 1, delay = this.backoff.firstMs; ; attempt++, delay = Math.min(delay * 2, this.backoff.maxMs)) {
      await this.wait(await this.options.limiter.reserve(this.options.key.client_email));
      try {
        return await call();
      } catch (error) {
        const failure = failureOf(error);
        if (failure?.status === 429 && attempt < this.backoff.attempts) {
          await this.wait(failure.retryAfterMs ?? delay);
          continue;
        }
        throw this.asError(error);
      }
    }
  }

  private asError(error: unknown): Error {
    // Cancelled (the activity's heartbeat timed out, or it was cancelled): the cancellation, not a Google failure.
    if (this.options.signal?.aborted) return this.options.signal.reason as Error;
    const failure = failureOf(error);
    // No answer (the connection cut, a timeout): retryable, and told in one line. The client's own error carries the
    // request (the rows written) and would land whole in the activity's failure.
    if (!failure)
      return new GoogleSheetsError(
        0,
        `Google Sheets did not answer: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}`,
        true,
      );
    const hint =
      failure.status === 403 || failure.status === 404
        ? ` (is the spreadsheet shared with ${this.options.key.client_email} as an editor?)`
        : '';
    return new GoogleSheetsError(
      failure.status,
      `Google Sheets answered ${failure.status}: ${failure.message}${hint}`,
      failure.status === 429 || failure.status >= 500,
    );
  }

  /** Reads the spreadsheet's tabs (a read: not under the write pace) and keeps their grids. */
  private async readGrids(spreadsheetId: string): Promise<sheets_v4.Schema$Sheet[]> {
    let data: sheets_v4.Schema$Spreadsheet;
    try {
      ({ data } = await this.api.spreadsheets.get({ spreadsheetId, fields: 'sheets.properties' }, this.callOptions));
    } catch (error) {
      throw this.asError(error);
    }
    for (const tab of data.sheets ?? []) {
      const properties = tab.properties!;
      this.grids.set(`${spreadsheetId}\n${properties.title}`, {
        sheetId: properties.sheetId ?? 0,
        rowCount: properties.gridProperties?.rowCount ?? 0,
        columnCount: properties.gridProperties?.columnCount ?? 0,
      });
    }
    return data.sheets ?? [];
  }

  private async grid(spreadsheetId: string, tab: string): Promise<TabGrid> {
    const key = `${spreadsheetId}\n${tab}`;
    if (!this.grids.has(key)) await this.readGrids(spreadsheetId);
    const grid = this.grids.get(key);
    if (!grid) throw new GoogleSheetsError(400, `the spreadsheet ${spreadsheetId} has no tab ${tab}`, false);
    return grid;
  }

  /** The attached spreadsheet (Google assigned its id): reachable, with the tab (added if missing). */
  async create({ key, tab }: { key: string; title: string; tab: string }) {
    const tabs = await this.readGrids(key);
    if (!tabs.some((candidate) => candidate.properties?.title === tab)) {
      await this.write(() =>
        this.api.spreadsheets.batchUpdate(
          { spreadsheetId: key, requestBody: { requests: [{ addSheet: { properties: { title: tab } } }] } },
          this.callOptions,
        ),
      );
      await this.readGrids(key);
    }
    return { spreadsheetId: key };
  }

  /**
   * Grows the tab's grid to hold `rows` × `columns` before writing there: rows doubled (at least to what is needed),
   * so that a long sheet costs a few grid writes, not one per page; columns to what is needed.
   */
  private async ensureGrid(spreadsheetId: string, tab: string, rows: number, columns: number) {
    const grid = await this.grid(spreadsheetId, tab);
    if (rows <= grid.rowCount && columns <= grid.columnCount) return;
    const rowCount = rows <= grid.rowCount ? grid.rowCount : Math.max(rows, grid.rowCount * 2);
    const columnCount = Math.max(columns, grid.columnCount);
    await this.write(() =>
      this.api.spreadsheets.batchUpdate(
        {
          spreadsheetId,
          requestBody: {
            requests: [
              {
                updateSheetProperties: {
                  properties: { sheetId: grid.sheetId, gridProperties: { rowCount, columnCount } },
                  fields: 'gridProperties(rowCount,columnCount)',
                },
              },
            ],
          },
        },
        this.callOptions,
      ),
    );
    Object.assign(grid, { rowCount, columnCount });
  }

  async batchUpdateValues(spreadsheetId: string, data: ValueRange[]) {
    const byTab = new Map<string, { rows: number; columns: number }>();
    for (const { range, values } of data) {
      const target = parseRange(range, '');
      const width = Math.max(0, ...values.map((row) => row.length));
      const need = byTab.get(target.tab) ?? { rows: 0, columns: 0 };
      byTab.set(target.tab, {
        rows: Math.max(need.rows, target.firstRow + values.length - 1),
        columns: Math.max(need.columns, target.firstColumn + width),
      });
    }
    const send = () =>
      this.write(() =>
        this.api.spreadsheets.values.batchUpdate(
          {
            spreadsheetId,
            requestBody: {
              valueInputOption: 'RAW',
              data: data.map(({ range, values }) => ({ range, majorDimension: 'ROWS', values: values.map(rawRow) })),
            },
          },
          this.callOptions,
        ),
      );
    for (const [tab, need] of byTab) await this.ensureGrid(spreadsheetId, tab, need.rows, need.columns);
    try {
      const { data: answer } = await send();
      return { totalUpdatedRows: answer.totalUpdatedRows ?? 0 };
    } catch (error) {
      // Someone shrank the grid since it was read: read it again, grow it, and write once more.
      if (!(error instanceof GoogleSheetsError) || !/exceeds grid limits/.test(error.message)) throw error;
      this.grids.clear();
      for (const [tab, need] of byTab) await this.ensureGrid(spreadsheetId, tab, need.rows, need.columns);
      const { data: answer } = await send();
      return { totalUpdatedRows: answer.totalUpdatedRows ?? 0 };
    }
  }

  /** Not used by the sync (a retried append adds the rows again); refused rather than imitated. */
  appendValues(): Promise<{ updatedRange: string }> {
    return Promise.reject(new Error('the google provider does not append: the sync writes fixed rows'));
  }

  /** Clears values; a range of a whole tab (Leads!A1:ZZ) is sent as the tab's name, which Google clears whole. */
  async clearValues(spreadsheetId: string, range: string) {
    const target = parseRange(range, '');
    const whole = target.firstRow === 1 && target.lastRow === undefined && target.firstColumn === 0;
    await this.write(() =>
      this.api.spreadsheets.values.clear(
        { spreadsheetId, range: whole ? target.tab : range, requestBody: {} },
        this.callOptions,
      ),
    );
  }

  /** Writes are live in Google Sheets: nothing to publish. */
  async flush() {}

  /** A Google spreadsheet is read in Google Sheets: no file is served here. */
  download() {
    return Promise.resolve(null);
  }

  /** The customer's spreadsheet is theirs: removing a live sheet leaves it, and its values, as they are. */
  async delete() {}
}
