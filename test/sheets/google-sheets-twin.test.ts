// The Google Sheets twin and the google provider held to Google's discovery document of the Sheets API v4 (vendored
// under vendor/discovery/google-sheets/): every request the provider sends through the official client, and every
// answer of the twin, checked against the methods and schemas it publishes; and the twin's refusals as Google makes
// them (docs/features/sheets.md#conformance).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GoogleSheetsError, GoogleSpreadsheetProvider } from '../../lib/sheets/google-provider';
import { parseServiceAccountKey } from '../../lib/sheets/service-account-key';
import {
  DISCOVERY_FILE,
  discoveryMethod,
  schemaProblems,
  sheetsDiscovery,
  type DiscoveryMethod,
} from '../../simulators/google-twin/discovery';
import { startGoogleSheetsTwin, twinAccessToken, type TwinKey } from '../support/google-sheets-twin';
import { startRecordingProxy, type RecordedExchange } from '../support/recording-proxy';

const USED = [
  'sheets.spreadsheets.get',
  'sheets.spreadsheets.batchUpdate',
  'sheets.spreadsheets.values.batchUpdate',
  'sheets.spreadsheets.values.clear',
  'sheets.spreadsheets.values.batchClear',
];
const document = sheetsDiscovery();
const twin = await startGoogleSheetsTwin({ writesPerWindow: 1_000, quotaWindowMs: 60_000 });
const proxy = await startRecordingProxy(twin.url);
const noPace = { reserve: () => Promise.resolve(0) };

/** A provider whose token and API requests all go through the recording proxy. */
function providerThroughProxy(key: TwinKey, backoff = { firstMs: 50, maxMs: 400, attempts: 4 }) {
  return new GoogleSpreadsheetProvider({
    name: 'google-twin',
    key: parseServiceAccountKey(JSON.stringify({ ...key, token_uri: `${proxy.url}/token` })),
    rootUrl: `${proxy.url}/`,
    limiter: noPace,
    backoff,
  });
}

/** The discovery method an exchange is, by its HTTP method and path against the methods' flatPath templates. */
function methodOf(exchange: RecordedExchange): DiscoveryMethod | undefined {
  const path = new URL(exchange.url, 'http://twin').pathname.slice(1);
  return USED.map((id) => discoveryMethod(id)).find((method) => {
    const pattern = (method.flatPath ?? method.path)
      .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
      .replace(/\{[^}]+\}/g, '[^/]+');
    return method.httpMethod === exchange.method && new RegExp(`^${pattern}$`).test(path);
  });
}

/** Where an exchange departs from the document: method, query parameters, request body, and answer. */
function exchangeProblems(exchange: RecordedExchange): string[] {
  const method = methodOf(exchange);
  if (!method) return [`${exchange.method} ${exchange.url}: no method of the document`];
  const problems: string[] = [];
  const query = new URL(exchange.url, 'http://twin').searchParams;
  const global = (document as unknown as { parameters: Record<string, unknown> }).parameters;
  for (const name of query.keys())
    if (!method.parameters?.[name] && !global[name]) problems.push(`${method.id}: query parameter ${name} unknown`);
  if (method.request) problems.push(...schemaProblems(JSON.parse(exchange.body || '{}'), method.request.$ref));
  else if (exchange.body) problems.push(`${method.id}: a body where the method takes none`);
  const answer = JSON.parse(exchange.responseBody || '{}') as unknown;
  if (exchange.status < 300) problems.push(...schemaProblems(answer, method.response!.$ref).map((p) => `answer ${p}`));
  else problems.push(...errorEnvelopeProblems(answer, exchange.status));
  return problems.map((problem) => `${exchange.method} ${exchange.url}: ${problem}`);
}

/** Google's error envelope: { error: { code, message, status } }, code the HTTP status. */
function errorEnvelopeProblems(answer: unknown, status: number): string[] {
  const error = (answer as { error?: { code?: unknown; message?: unknown; status?: unknown } }).error;
  if (!error) return ['an error without the envelope'];
  const problems: string[] = [];
  if (error.code !== status) problems.push(`error.code ${String(error.code)} is not the status ${status}`);
  if (typeof error.message !== 'string' || typeof error.status !== 'string') problems.push('error.message/status');
  return problems;
}

/** An access token of the twin for the Sheets scope. */
const accessToken = (key: TwinKey) =>
  twinAccessToken(`${twin.url}/token`, key, ['https://www.googleapis.com/auth/spreadsheets']);

const call = (path: string, token: string | null, body?: unknown) =>
  fetch(`${twin.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe("Google's vendored discovery document", () => {
  it('is the published Sheets v4 document, with its provenance, and holds the methods used', () => {
    const source = readFileSync(DISCOVERY_FILE.replace(/sheets\.v4\.used\.json$/, 'SOURCE'), 'utf8');
    const vendored = document['x-vendored'];
    expect(source).toContain(`commit: ${vendored.commit}`);
    expect(source).toContain(`sha256: ${vendored.sha256}`);
    expect(source).toContain(`repository: https://github.com/${vendored.repository}`);
    expect(vendored.path).toBe('discoveries/sheets.v4.json');
    expect(createHash('sha256').update(vendored.sha256).digest('hex')).toHaveLength(64);
    expect({ rootUrl: document.rootUrl, revision: document.revision }).toEqual({
      rootUrl: 'https://sheets.googleapis.com/',
      revision: expect.stringMatching(/^20\d{6}$/),
    });
    for (const id of USED) expect(discoveryMethod(id).id).toBe(id);
    expect(() => discoveryMethod('sheets.spreadsheets.values.append')).toThrow(/no method/);
  });

  it('checks values against its schemas: the checker finds what departs from them', () => {
    const good = {
      valueInputOption: 'RAW',
      data: [{ range: 'Leads!A2:B2', majorDimension: 'ROWS', values: [['a', 1]] }],
    };
    expect(schemaProblems(good, 'BatchUpdateValuesRequest')).toEqual([]);
    expect(schemaProblems({ ...good, valueInputOption: 'TYPED' }, 'BatchUpdateValuesRequest')).toEqual([
      expect.stringContaining('TYPED is not one of'),
    ]);
    expect(schemaProblems({ ...good, appendRows: true }, 'BatchUpdateValuesRequest')).toEqual([
      expect.stringContaining('appendRows: not a member'),
    ]);
    expect(
      schemaProblems(
        { requests: [{ updateSheetProperties: { properties: { gridProperties: { rowCount: '2000' } } } }] },
        'BatchUpdateSpreadsheetRequest',
      ),
    ).toEqual([expect.stringContaining('rowCount: not an integer')]);
  });
});

describe('the google provider against the twin, every exchange held to the document', () => {
  it('adds the tab, grows the grid before writing beyond 1,000 x 26, writes fixed rows, clears, all as the document describes', async () => {
    const key = await twin.serviceAccount();
    const spreadsheetId = await twin.spreadsheet([key.client_email]);
    const provider = providerThroughProxy(key);
    const before = proxy.exchanges.length;
    await provider.create({ key: spreadsheetId, title: 'Campaign', tab: 'Leads' });
    const rows = (from: number, count: number) =>
      Array.from({ length: count }, (_, index) => ({
        range: `Leads!A${from + index}:C${from + index}`,
        values: [[`lead ${from + index}`, from + index, null]],
      }));
    await provider.batchUpdateValues(spreadsheetId, [{ range: 'Leads!A1:C1', values: [['leadId', 'n', 'empty']] }]);
    await provider.batchUpdateValues(spreadsheetId, rows(2, 999));
    await provider.batchUpdateValues(spreadsheetId, rows(1_001, 1_500));
    // Written twice (a retried page): the same cells, no new row.
    await provider.batchUpdateValues(spreadsheetId, rows(1_001, 1_500));
    const [, leads] = await twin.tabs(spreadsheetId);
    expect(leads).toMatchObject({ title: 'Leads', rowCount: 2_500, columnCount: 26 });
    expect(leads!.values).toHaveLength(2_500);
    expect(leads!.values[2_499]).toEqual(['lead 2500', 2_500]);
    await provider.clearValues(spreadsheetId, 'Leads!A1:ZZ');
    expect((await twin.tabs(spreadsheetId))[1]!.values).toEqual([]);

    const exchanges = proxy.exchanges.slice(before);
    const apiCalls = exchanges.filter((exchange) => exchange.url.startsWith('/v4/'));
    expect(new Set(apiCalls.map((exchange) => methodOf(exchange)?.id))).toEqual(
      new Set([
        'sheets.spreadsheets.get',
        'sheets.spreadsheets.batchUpdate',
        'sheets.spreadsheets.values.batchUpdate',
        'sheets.spreadsheets.values.clear',
      ]),
    );
    expect(apiCalls.flatMap(exchangeProblems)).toEqual([]);
    // The grid grew once (1,000 -> 2,500 rows: doubled, at least what was needed) before the write beyond it.
    const grows = apiCalls.filter((exchange) => exchange.body.includes('updateSheetProperties'));
    expect(grows.map((exchange) => JSON.parse(exchange.body))).toEqual([
      {
        requests: [
          {
            updateSheetProperties: {
              properties: { sheetId: expect.any(Number), gridProperties: { rowCount: 2_500, columnCount: 26 } },
              fields: 'gridProperties(rowCount,columnCount)',
            },
          },
        ],
      },
    ]);
    // Every API call carried the Bearer token the twin issued at the key's token_uri, for a JWT of the key.
    const token = exchanges.find((exchange) => exchange.url === '/token');
    expect(token?.status).toBe(200);
    expect(new URLSearchParams(token!.body).get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const issued = (JSON.parse(token!.responseBody) as { access_token: string }).access_token;
    for (const exchange of apiCalls) expect(exchange.headers.authorization).toBe(`Bearer ${issued}`);
    // RAW values: null sent as '' (Google skips a null cell), never an append.
    const page = apiCalls.find((exchange) => exchange.body.includes('lead 2'))!;
    const sent = JSON.parse(page.body) as { valueInputOption: string; data: { range: string; values: unknown[][] }[] };
    expect([sent.valueInputOption, sent.data[0]]).toEqual([
      'RAW',
      { range: 'Leads!A2:C2', majorDimension: 'ROWS', values: [['lead 2', 2, '']] },
    ]);
    expect(apiCalls.some((exchange) => exchange.url.includes(':append'))).toBe(false);
  });

  it('waits Retry-After after a 429, else backs off exponentially, then gives up with a retryable error', async () => {
    const key = await twin.serviceAccount();
    const spreadsheetId = await twin.spreadsheet([key.client_email], ['Leads']);
    const provider = providerThroughProxy(key);
    await twin.faults({ quotaEvery: 2, retryAfterSeconds: 1 });
    await provider.batchUpdateValues(spreadsheetId, [{ range: 'Leads!A1', values: [['one']] }]);
    await provider.batchUpdateValues(spreadsheetId, [{ range: 'Leads!A2', values: [['two']] }]);
    const mine = twin.writes().filter((write) => write.account === key.client_email);
    expect(mine.map((write) => write.outcome)).toEqual(['accepted', 'injected', 'accepted']);
    expect(mine[2]!.at - mine[1]!.at).toBeGreaterThanOrEqual(1_000);
    // Every write refused: 4 attempts (50, 100, 200 ms apart), then a retryable GoogleSheetsError.
    await twin.faults({ quotaEvery: 1 });
    const failed = await provider
      .batchUpdateValues(spreadsheetId, [{ range: 'Leads!A3', values: [['x']] }])
      .catch((error: unknown) => error);
    await twin.faults({});
    expect(failed).toBeInstanceOf(GoogleSheetsError);
    expect(failed).toMatchObject({ status: 429, retryable: true });
    const refused = twin
      .writes()
      .filter((write) => write.account === key.client_email)
      .slice(3);
    expect(refused.map((write) => write.outcome)).toEqual(['injected', 'injected', 'injected', 'injected']);
    expect(refused[3]!.at - refused[2]!.at).toBeGreaterThanOrEqual(200);
    for (const exchange of proxy.exchanges.filter((exchange) => exchange.status === 429))
      expect(exchangeProblems(exchange)).toEqual([]);
  });
});

describe("the twin's refusals, as Google answers them", () => {
  it('refuses without its Bearer token, an unshared or unknown spreadsheet, and a write beyond the grid', async () => {
    const key = await twin.serviceAccount();
    const stranger = await twin.serviceAccount();
    const spreadsheetId = await twin.spreadsheet([key.client_email], ['Leads']);
    const token = await accessToken(key);
    const write = (range: string) => ({ valueInputOption: 'RAW', data: [{ range, values: [['x']] }] });

    const anonymous = await call(`/v4/spreadsheets/${spreadsheetId}`, null);
    expect([anonymous.status, await anonymous.json()]).toEqual([
      401,
      { error: expect.objectContaining({ code: 401, status: 'UNAUTHENTICATED' }) },
    ]);
    const forged = await call(`/v4/spreadsheets/${spreadsheetId}`, 'ya29.not-one-it-issued');
    expect(forged.status).toBe(401);
    const notShared = await call(`/v4/spreadsheets/${spreadsheetId}`, await accessToken(stranger));
    expect(await notShared.json()).toEqual({
      error: { code: 403, message: 'The caller does not have permission', status: 'PERMISSION_DENIED' },
    });
    const unknown = await call('/v4/spreadsheets/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms', token);
    expect(await unknown.json()).toEqual({
      error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' },
    });

    const beyond = await call(`/v4/spreadsheets/${spreadsheetId}/values:batchUpdate`, token, write('Leads!A1001'));
    expect(await beyond.json()).toEqual({
      error: {
        code: 400,
        message: 'Range (Leads!A1001) exceeds grid limits. Max rows: 1000, max columns: 26',
        status: 'INVALID_ARGUMENT',
      },
    });
    const wide = await call(`/v4/spreadsheets/${spreadsheetId}/values:batchUpdate`, token, write('Leads!AA1'));
    expect(wide.status).toBe(400);
    const noOption = await call(`/v4/spreadsheets/${spreadsheetId}/values:batchUpdate`, token, { data: [] });
    expect(((await noOption.json()) as { error: { message: string } }).error.message).toMatch(/valueInputOption/);
    const unknownMember = await call(`/v4/spreadsheets/${spreadsheetId}/values:batchUpdate`, token, {
      ...write('Leads!A1'),
      rows: 1,
    });
    expect(((await unknownMember.json()) as { error: { message: string } }).error.message).toMatch(
      /Invalid JSON payload received.*rows/,
    );
  });

  it('refuses a token request signed by another key, and answers 429 RESOURCE_EXHAUSTED over the quota', async () => {
    const key = await twin.serviceAccount();
    const other = await twin.serviceAccount();
    const provider = new GoogleSpreadsheetProvider({
      name: 'google-twin',
      key: parseServiceAccountKey(JSON.stringify({ ...key, private_key: other.private_key })),
      rootUrl: twin.rootUrl,
      limiter: noPace,
    });
    const spreadsheetId = await twin.spreadsheet([key.client_email], ['Leads']);
    await expect(provider.create({ key: spreadsheetId, title: 't', tab: 'Leads' })).rejects.toMatchObject({
      status: 400,
      retryable: false,
    });

    const quotaTwin = await startGoogleSheetsTwin({ writesPerWindow: 3, quotaWindowMs: 60_000 });
    const quotaKey = await quotaTwin.serviceAccount();
    const sheet = await quotaTwin.spreadsheet([quotaKey.client_email], ['Leads']);
    const limited = new GoogleSpreadsheetProvider({
      name: 'google-twin',
      key: parseServiceAccountKey(JSON.stringify(quotaKey)),
      rootUrl: quotaTwin.rootUrl,
      limiter: noPace,
      backoff: { firstMs: 10, maxMs: 20, attempts: 2 },
    });
    for (let row = 1; row <= 3; row++)
      await limited.batchUpdateValues(sheet, [{ range: `Leads!A${row}`, values: [[row]] }]);
    const over = await limited
      .batchUpdateValues(sheet, [{ range: 'Leads!A4', values: [[4]] }])
      .catch((error: unknown) => error);
    expect(over).toMatchObject({ status: 429, retryable: true });
    expect((over as Error).message).toMatch(/Quota exceeded for quota metric 'Write requests'/);
    expect(quotaTwin.writes().map((write) => write.outcome)).toEqual([
      'accepted',
      'accepted',
      'accepted',
      'quota',
      'quota',
    ]);
  });
});
