import { createPublicKey, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import { closeHttp, listenHttp } from '../../lib/http/listen';
import { createCalendarApi } from './calendar';
import { discoveryMethod, schemaProblems } from './discovery';
import { CALENDAR_ERRORS, GOOGLE_ERRORS, GoogleApiError } from './errors';
import {
  a1Of,
  cellCount,
  checkGrid,
  MAX_CELLS,
  newSpreadsheetId,
  newTab,
  NEW_TAB_GRID,
  resolveRange,
  tabValues,
  type Cell,
  type Tab,
  type TwinSpreadsheet,
} from './grid';
import {
  createServiceAccountKey,
  GOOGLE_TOKEN_URL,
  JWT_BEARER,
  newAccessToken,
  OAuthError,
  SHEETS_SCOPES,
  verifyAssertion,
  type TwinServiceAccount,
} from './oauth';

/**
 * The Google Sheets twin (docs/features/sheets.md#the-google-sheets-twin): a local server speaking the Sheets API v4
 * methods the google provider calls (spreadsheets.get, spreadsheets.batchUpdate for grid properties and new tabs,
 * values.batchUpdate, values.clear, values.batchClear) and Google's OAuth token endpoint for service accounts, so that
 * `@googleapis/sheets` works against it with only its rootUrl and the key's token_uri changed. Bearer tokens it issued,
 * spreadsheets shared with the account, grid limits, the write quota per account (429 RESOURCE_EXHAUSTED) and Google's
 * error envelope. State is in memory. TEST CONTROL routes (not Google's) under /control.
 */
export interface GoogleSheetsTwinOptions {
  /** Accounts known from the start (a key's public half); more are made by POST /control/service-accounts. */
  accounts?: { clientEmail: string; publicKeyPem: string; projectNumber?: string }[];
  /** Write requests allowed per account in any window of `quotaWindowMs`: Google's 60 a minute per user per project. */
  writesPerWindow?: number;
  quotaWindowMs?: number;
}

/** One write request as the twin took or refused it. */
export interface TwinWrite {
  at: number;
  account: string;
  method: string;
  spreadsheetId: string;
  /** accepted; quota: over the quota; injected: a 429 the test asked for; invalid: any other refusal. */
  outcome: 'accepted' | 'quota' | 'injected' | 'invalid';
  ranges: string[];
  rows: number;
}

const WRITE_METHODS = new Set(['batchUpdate', 'values.batchUpdate', 'values.clear', 'values.batchClear']);

const faultsSchema = z.strictObject({
  /** Every n-th write request (counting from the change) is answered 429, before the quota is looked at. */
  quotaEvery: z.number().int().min(1).nullable().optional(),
  /** With them, Retry-After in seconds (Google sends none; absent: none). */
  retryAfterSeconds: z.number().int().min(0).max(60).nullable().optional(),
  /** Every n-th accepted values.batchUpdate is applied and its answer lost (the connection cut): a write whose caller cannot know it landed. */
  dropAnswerEvery: z.number().int().min(1).nullable().optional(),
});

export function createGoogleSheetsTwin(options: GoogleSheetsTwinOptions = {}) {
  const writesPerWindow = options.writesPerWindow ?? 60;
  const quotaWindowMs = options.quotaWindowMs ?? 60_000;
  const accounts = new Map<string, TwinServiceAccount>();
  for (const account of options.accounts ?? [])
    accounts.set(account.clientEmail, {
      clientEmail: account.clientEmail,
      projectNumber: account.projectNumber ?? '100000000001',
      publicKey: createPublicKey(account.publicKeyPem),
    });
  const tokens = new Map<string, { account: string; expiresAt: number; scopes: string[]; subject?: string }>();
  const spreadsheets = new Map<string, TwinSpreadsheet>();
  const writes: TwinWrite[] = [];
  /** Accepted writes' times per account, oldest first, within the window. */
  const recent = new Map<string, number[]>();
  let faults: z.infer<typeof faultsSchema> = {};
  let writeAttempts = 0;
  let valueWrites = 0;
  let server: Server | undefined;

  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '64mb' }));
  app.use(express.urlencoded({ extended: false }));

  const ownUrl = (req: Request) => `${req.protocol}://${req.get('host')}`;

  // Google's token endpoint (RFC 7523 JWT bearer grant).
  app.post('/token', (req, res) => {
    const form = req.body as Record<string, string | undefined>;
    if (form.grant_type !== JWT_BEARER || !form.assertion) {
      res
        .status(400)
        .json({ error: 'unsupported_grant_type', error_description: 'Invalid grant_type: ' + (form.grant_type ?? '') });
      return;
    }
    try {
      const { account, scopes, subject } = verifyAssertion(form.assertion, accounts, [
        GOOGLE_TOKEN_URL,
        `${ownUrl(req)}/token`,
      ]);
      const accessToken = newAccessToken();
      tokens.set(accessToken, { account: account.clientEmail, expiresAt: Date.now() + 3_600_000, scopes, subject });
      res.json({ access_token: accessToken, expires_in: 3599, token_type: 'Bearer' });
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      res.status(400).json({ error: error.error, error_description: error.description });
    }
  });

  /** The live token the request bears, or undefined. */
  function tokenOf(req: Request) {
    const match = /^Bearer (\S+)$/.exec(req.get('authorization') ?? '');
    const token = match ? tokens.get(match[1]!) : undefined;
    return token && token.expiresAt >= Date.now() ? token : undefined;
  }

  function caller(req: Request): TwinServiceAccount {
    const token = tokenOf(req);
    if (!token) throw GOOGLE_ERRORS.unauthenticated();
    if (!token.scopes.some((scope) => SHEETS_SCOPES.includes(scope))) throw GOOGLE_ERRORS.insufficientScopes();
    return accounts.get(token.account)!;
  }

  const calendar = createCalendarApi((req) => {
    const token = tokenOf(req);
    if (!token) throw CALENDAR_ERRORS.unauthenticated();
    return { email: token.subject ?? token.account, scopes: token.scopes, delegated: token.subject !== undefined };
  });

  function spreadsheetFor(account: TwinServiceAccount, id: string): TwinSpreadsheet {
    const spreadsheet = spreadsheets.get(id);
    if (!spreadsheet) throw GOOGLE_ERRORS.notFound();
    if (!spreadsheet.editors.has(account.clientEmail)) throw GOOGLE_ERRORS.permissionDenied();
    return spreadsheet;
  }

  function checkBody(methodId: string, body: unknown): void {
    const method = discoveryMethod(methodId);
    const problems = method.request ? schemaProblems(body ?? {}, method.request.$ref) : [];
    // Google's words for a member it does not know: "Invalid JSON payload received. Unknown name ...".
    if (problems.length) throw GOOGLE_ERRORS.invalid(`Invalid JSON payload received. ${problems.join('; ')}`);
  }

  /** The write quota, and the 429s a test asked for: before the write changes anything. */
  function admitWrite(account: TwinServiceAccount, record: Omit<TwinWrite, 'at' | 'account' | 'outcome'>): void {
    const now = Date.now();
    writeAttempts += 1;
    if (faults.quotaEvery && writeAttempts % faults.quotaEvery === 0) {
      writes.push({ ...record, at: now, account: account.clientEmail, outcome: 'injected' });
      throw GOOGLE_ERRORS.quota(account.projectNumber, faults.retryAfterSeconds ?? undefined);
    }
    const times = (recent.get(account.clientEmail) ?? []).filter((time) => time > now - quotaWindowMs);
    recent.set(account.clientEmail, times);
    if (times.length >= writesPerWindow) {
      writes.push({ ...record, at: now, account: account.clientEmail, outcome: 'quota' });
      throw GOOGLE_ERRORS.quota(account.projectNumber);
    }
    times.push(now);
  }

  const spreadsheetResource = (spreadsheet: TwinSpreadsheet, req: Request) => ({
    spreadsheetId: spreadsheet.spreadsheetId,
    properties: {
      title: spreadsheet.title,
      locale: 'en_US',
      autoRecalc: 'ON_CHANGE',
      timeZone: 'Etc/GMT',
    },
    sheets: spreadsheet.tabs.map((tab) => ({
      properties: {
        sheetId: tab.sheetId,
        title: tab.title,
        index: tab.index,
        sheetType: 'GRID',
        gridProperties: { rowCount: tab.rowCount, columnCount: tab.columnCount },
      },
    })),
    spreadsheetUrl: `${ownUrl(req)}/spreadsheets/d/${spreadsheet.spreadsheetId}/edit`,
  });

  function writeValues(
    spreadsheet: TwinSpreadsheet,
    data: { range: string; values?: unknown[][]; majorDimension?: string },
  ) {
    if (data.majorDimension && data.majorDimension !== 'ROWS')
      throw GOOGLE_ERRORS.invalid('The twin writes majorDimension ROWS only.');
    const target = resolveRange(spreadsheet, data.range);
    const values = data.values ?? [];
    const width = Math.max(0, ...values.map((row) => row.length));
    checkGrid(data.range, target, values.length, width);
    if (target.endColumn !== undefined && target.startColumn + width > target.endColumn)
      throw GOOGLE_ERRORS.invalid(
        `Requested writing within range [${data.range}], but tried writing to column [${String.fromCharCode(65 + target.startColumn + width - 1)}]`,
      );
    if (target.endRow !== undefined && target.startRow + values.length > target.endRow)
      throw GOOGLE_ERRORS.invalid(
        `Requested writing within range [${data.range}], but tried writing to row [${target.startRow + values.length}]`,
      );
    values.forEach((rowValues, offset) => {
      const r = target.startRow + offset;
      const row = (target.tab.rows[r] ??= []);
      rowValues.forEach((value, column) => {
        // RAW: null skips the cell (Google: "null values will be skipped"); '' empties it.
        if (value === null || value === undefined) return;
        if (typeof value === 'object')
          throw GOOGLE_ERRORS.invalid(`Invalid values[${offset}][${column}]: struct_value`);
        row[target.startColumn + column] = value === '' ? undefined : (value as Cell);
      });
    });
    const updatedRange = a1Of(
      target.tab,
      target.startRow,
      target.startRow + Math.max(values.length, 1),
      target.startColumn,
      target.startColumn + Math.max(width, 1),
    );
    return {
      spreadsheetId: spreadsheet.spreadsheetId,
      updatedRange,
      updatedRows: values.length,
      updatedColumns: width,
      updatedCells: values.reduce((sum, row) => sum + row.length, 0),
    };
  }

  function clear(spreadsheet: TwinSpreadsheet, range: string): string {
    const target = resolveRange(spreadsheet, range);
    const { tab } = target;
    const endRow = Math.min(target.endRow ?? tab.rowCount, tab.rowCount);
    const endColumn = Math.min(target.endColumn ?? tab.columnCount, tab.columnCount);
    for (let r = target.startRow; r < Math.min(endRow, tab.rows.length); r++) {
      const row = tab.rows[r];
      if (row) for (let c = target.startColumn; c < endColumn; c++) row[c] = undefined;
    }
    return a1Of(tab, target.startRow, endRow, target.startColumn, endColumn);
  }

  /** spreadsheets.batchUpdate: the requests the provider sends (grid properties, a new tab), all or none. */
  function applyRequests(spreadsheet: TwinSpreadsheet, requests: Record<string, unknown>[]) {
    const tabs = spreadsheet.tabs.map((tab) => ({ ...tab }));
    const replies: Record<string, unknown>[] = [];
    const tabOf = (sheetId: unknown, at: string) => {
      const tab = tabs.find((candidate) => candidate.sheetId === (sheetId ?? 0));
      if (!tab) throw GOOGLE_ERRORS.invalid(`Invalid ${at}: No grid with id: ${String(sheetId)}`);
      return tab;
    };
    requests.forEach((request, index) => {
      const [kind, ...others] = Object.keys(request);
      if (!kind || others.length) throw GOOGLE_ERRORS.invalid(`Invalid requests[${index}]: one kind of request each`);
      const body = request[kind] as Record<string, unknown>;
      if (kind === 'updateSheetProperties') {
        const properties = (body.properties ?? {}) as {
          sheetId?: number;
          title?: string;
          gridProperties?: Partial<Record<'rowCount' | 'columnCount', number>>;
        };
        const fields = typeof body.fields === 'string' ? body.fields : '';
        if (!fields)
          throw GOOGLE_ERRORS.invalid(
            `Invalid requests[${index}].updateSheetProperties: At least one field must be updated, but none was specified.`,
          );
        const tab = tabOf(properties.sheetId, `requests[${index}].updateSheetProperties`);
        const named = fields.replace(/gridProperties\(([^)]*)\)/, (_, inner: string) =>
          inner
            .split(',')
            .map((name) => `gridProperties.${name.trim()}`)
            .join(','),
        );
        for (const field of named.split(',').map((name) => name.trim())) {
          if (field === 'gridProperties.rowCount' || field === 'gridProperties')
            tab.rowCount = properties.gridProperties?.rowCount ?? tab.rowCount;
          if (field === 'gridProperties.columnCount' || field === 'gridProperties')
            tab.columnCount = properties.gridProperties?.columnCount ?? tab.columnCount;
          if (field === 'title' && properties.title) tab.title = properties.title;
          if (!['gridProperties', 'gridProperties.rowCount', 'gridProperties.columnCount', 'title'].includes(field))
            throw GOOGLE_ERRORS.invalid(
              `Invalid requests[${index}].updateSheetProperties: the twin does not imitate the field ${field}`,
            );
        }
        if (tab.rowCount < 1 || tab.columnCount < 1)
          throw GOOGLE_ERRORS.invalid(
            `Invalid requests[${index}].updateSheetProperties: You can't delete all the rows on the sheet.`,
          );
        replies.push({});
      } else if (kind === 'appendDimension') {
        const tab = tabOf(body.sheetId, `requests[${index}].appendDimension`);
        const length = Number(body.length);
        if (!Number.isInteger(length) || length < 1)
          throw GOOGLE_ERRORS.invalid(`Invalid requests[${index}].appendDimension: length must be positive`);
        if (body.dimension === 'ROWS') tab.rowCount += length;
        else if (body.dimension === 'COLUMNS') tab.columnCount += length;
        else
          throw GOOGLE_ERRORS.invalid(`Invalid requests[${index}].appendDimension: dimension must be ROWS or COLUMNS`);
        replies.push({});
      } else if (kind === 'addSheet') {
        const properties = (body.properties ?? {}) as {
          title?: string;
          gridProperties?: { rowCount?: number; columnCount?: number };
        };
        const title = properties.title ?? `Sheet${tabs.length + 1}`;
        if (tabs.some((tab) => tab.title === title))
          throw GOOGLE_ERRORS.invalid(
            `Invalid requests[${index}].addSheet: A sheet with the name "${title}" already exists. Please enter another name.`,
          );
        const tab = newTab(title, tabs.length, { ...NEW_TAB_GRID, ...properties.gridProperties });
        tabs.push(tab);
        replies.push({
          addSheet: {
            properties: {
              sheetId: tab.sheetId,
              title,
              index: tab.index,
              sheetType: 'GRID',
              gridProperties: { rowCount: tab.rowCount, columnCount: tab.columnCount },
            },
          },
        });
      } else throw GOOGLE_ERRORS.invalid(`Invalid requests[${index}]: the twin does not imitate ${kind}`);
    });
    if (cellCount({ ...spreadsheet, tabs }) > MAX_CELLS)
      throw GOOGLE_ERRORS.invalid(
        `This action would increase the number of cells in the workbook above the limit of ${MAX_CELLS} cells.`,
      );
    // Rows beyond a shrunk grid are gone, as in Google Sheets.
    for (const tab of tabs) {
      tab.rows = tab.rows.slice(0, tab.rowCount).map((row) => row?.slice(0, tab.columnCount));
    }
    spreadsheet.tabs = tabs;
    return replies;
  }

  const api = express.Router();
  api.use((req: Request, res: Response, next: NextFunction) => {
    try {
      const account = caller(req);
      const match = /^\/spreadsheets\/([^/:]+)(.*)$/.exec(req.path);
      if (!match) throw GOOGLE_ERRORS.notFound();
      const [, id, rest] = match as unknown as [string, string, string];
      const route = `${req.method} ${rest.replace(/^\/values\/[^/]+:clear$/, '/values/{range}:clear')}`;
      const body = req.body as Record<string, unknown>;
      const method =
        route === 'GET '
          ? 'get'
          : route === 'POST :batchUpdate'
            ? 'batchUpdate'
            : route === 'POST /values:batchUpdate'
              ? 'values.batchUpdate'
              : route === 'POST /values:batchClear'
                ? 'values.batchClear'
                : route === 'POST /values/{range}:clear'
                  ? 'values.clear'
                  : undefined;
      if (!method) throw GOOGLE_ERRORS.notFound();
      const spreadsheet = spreadsheetFor(account, decodeURIComponent(id));
      if (method === 'get') {
        res.json(spreadsheetResource(spreadsheet, req));
        return;
      }
      const methodId = method === 'batchUpdate' ? 'sheets.spreadsheets.batchUpdate' : `sheets.spreadsheets.${method}`;
      const record = { method, spreadsheetId: spreadsheet.spreadsheetId, ranges: [] as string[], rows: 0 };
      if (method === 'values.batchUpdate') {
        const data = (body?.data ?? []) as { range: string; values?: unknown[][] }[];
        record.ranges = data.map((item) => item.range);
        record.rows = data.reduce((sum, item) => sum + (item.values?.length ?? 0), 0);
      }
      if (method === 'values.batchClear') record.ranges = ((body?.ranges ?? []) as string[]).slice();
      if (method === 'values.clear')
        record.ranges = [decodeURIComponent(rest.slice('/values/'.length, -':clear'.length))];
      if (WRITE_METHODS.has(method)) admitWrite(account, record);
      try {
        checkBody(methodId, body);
        const answer = answerWrite(spreadsheet, method, body, record.ranges);
        writes.push({ ...record, at: Date.now(), account: account.clientEmail, outcome: 'accepted' });
        if (method === 'values.batchUpdate' && faults.dropAnswerEvery && ++valueWrites % faults.dropAnswerEvery === 0) {
          req.socket.destroy();
          return;
        }
        res.json(answer);
      } catch (error) {
        writes.push({ ...record, at: Date.now(), account: account.clientEmail, outcome: 'invalid' });
        throw error;
      }
    } catch (error) {
      next(error);
    }
  });

  function answerWrite(spreadsheet: TwinSpreadsheet, method: string, body: Record<string, unknown>, ranges: string[]) {
    if (method === 'batchUpdate') {
      const requests = (body.requests ?? []) as Record<string, unknown>[];
      return { spreadsheetId: spreadsheet.spreadsheetId, replies: applyRequests(spreadsheet, requests) };
    }
    if (method === 'values.batchUpdate') {
      const option = body.valueInputOption;
      if (option !== 'RAW' && option !== 'USER_ENTERED')
        throw GOOGLE_ERRORS.invalid("'valueInputOption' is required but not specified");
      if (option === 'USER_ENTERED') throw GOOGLE_ERRORS.invalid('The twin takes valueInputOption RAW only.');
      const data = (body.data ?? []) as { range: string; values?: unknown[][]; majorDimension?: string }[];
      // All or none, as Google applies a batch: the grid is checked for every range before anything is written.
      for (const item of data) {
        const target = resolveRange(spreadsheet, item.range);
        checkGrid(
          item.range,
          target,
          item.values?.length ?? 0,
          Math.max(0, ...(item.values ?? []).map((row) => row.length)),
        );
      }
      const responses = data.map((item) => writeValues(spreadsheet, item));
      return {
        spreadsheetId: spreadsheet.spreadsheetId,
        totalUpdatedRows: responses.reduce((sum, item) => sum + item.updatedRows, 0),
        totalUpdatedColumns: Math.max(0, ...responses.map((item) => item.updatedColumns)),
        totalUpdatedCells: responses.reduce((sum, item) => sum + item.updatedCells, 0),
        totalUpdatedSheets: new Set(responses.map((item) => item.updatedRange.split('!')[0])).size,
        responses,
      };
    }
    if (method === 'values.batchClear')
      return {
        spreadsheetId: spreadsheet.spreadsheetId,
        clearedRanges: ranges.map((range) => clear(spreadsheet, range)),
      };
    return { spreadsheetId: spreadsheet.spreadsheetId, clearedRange: clear(spreadsheet, ranges[0]!) };
  }

  app.use('/v4', api);
  app.use('/calendar/v3', calendar.api);

  // TEST CONTROL routes, not Google's.
  const control = express.Router();
  control.post('/service-accounts', (req, res) => {
    const body = z
      .strictObject({ clientEmail: z.string().email().optional(), projectId: z.string().optional() })
      .safeParse(req.body ?? {});
    if (!body.success) return void res.status(400).json({ error: 'invalid_body', issues: body.error.issues });
    const projectId = body.data.projectId ?? 'twin-project';
    const clientEmail =
      body.data.clientEmail ?? `sheets-${randomUUID().slice(0, 8)}@${projectId}.iam.gserviceaccount.com`;
    const { key, publicKey } = createServiceAccountKey({ clientEmail, projectId, tokenUri: `${ownUrl(req)}/token` });
    accounts.set(clientEmail, { clientEmail, projectNumber: '100000000001', publicKey });
    res.status(201).json(key);
  });
  control.post('/spreadsheets', (req, res) => {
    const body = z
      .strictObject({
        title: z.string().default('Untitled spreadsheet'),
        sharedWith: z.array(z.string().email()).default([]),
        tabs: z.array(z.string().min(1)).min(1).default(['Sheet1']),
      })
      .safeParse(req.body ?? {});
    if (!body.success) return void res.status(400).json({ error: 'invalid_body', issues: body.error.issues });
    const spreadsheetId = newSpreadsheetId();
    spreadsheets.set(spreadsheetId, {
      spreadsheetId,
      title: body.data.title,
      editors: new Set(body.data.sharedWith),
      tabs: body.data.tabs.map((title, index) => newTab(title, index)),
    });
    res.status(201).json({ spreadsheetId });
  });
  control.get('/spreadsheets/:id', (req, res) => {
    const spreadsheet = spreadsheets.get(String(req.params.id));
    if (!spreadsheet) return void res.status(404).json({ error: 'not_found' });
    res.json({
      spreadsheetId: spreadsheet.spreadsheetId,
      editors: [...spreadsheet.editors],
      tabs: spreadsheet.tabs.map((tab: Tab) => ({
        title: tab.title,
        sheetId: tab.sheetId,
        rowCount: tab.rowCount,
        columnCount: tab.columnCount,
        values: tabValues(tab),
      })),
    });
  });
  control.get('/writes', (req, res) => {
    const spreadsheetId = typeof req.query.spreadsheetId === 'string' ? req.query.spreadsheetId : undefined;
    res.json({
      writesPerWindow,
      quotaWindowMs,
      writes: writes.filter((write) => spreadsheetId === undefined || write.spreadsheetId === spreadsheetId),
    });
  });
  control.post('/faults', (req, res) => {
    const body = faultsSchema.safeParse(req.body ?? {});
    if (!body.success) return void res.status(400).json({ error: 'invalid_body', issues: body.error.issues });
    faults = body.data;
    writeAttempts = 0;
    valueWrites = 0;
    res.json(faults);
  });
  app.use('/control/calendars', calendar.control);
  app.use('/control', control);

  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    void next;
    if ((error as { type?: string }).type === 'entity.parse.failed') {
      res.status(400).json(GOOGLE_ERRORS.invalid('Invalid JSON payload received.').body);
      return;
    }
    if (!(error instanceof GoogleApiError)) {
      console.error('google sheets twin: unexpected error', error);
      res.status(500).json(new GoogleApiError(500, 'INTERNAL', 'Internal error encountered.').body);
      return;
    }
    if (error.retryAfterSeconds !== undefined) res.set('Retry-After', String(error.retryAfterSeconds));
    res.status(error.code).json(error.body);
  });

  return {
    app,
    writes: () => writes,
    async listen(port: number, host = '127.0.0.1'): Promise<string> {
      const listening = await listenHttp(app, port, host);
      server = listening.server;
      return listening.url;
    },
    close: () => closeHttp(server),
  };
}

export type GoogleSheetsTwin = ReturnType<typeof createGoogleSheetsTwin>;
