import { z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import { EXPORT_FORMATS } from '../../lib/exports/export-formats';
import { SHEET_COLUMNS, SHEET_DEFAULT_INTERVAL_SECONDS, SHEET_INTERVAL_BOUNDS } from '../../lib/sheets/columns';
import { defineRoute } from '../http/route';
import { createSheet, deleteSheet, findSheet, requestSheetSync, sheetFile, updateSheet } from './sheets';
import { exportFile, sendFile } from '../exports/routes';

// Spec section 5: live sheets are intel.view and need a plan including business intelligence (basic, as
// exports); keys need campaigns.edit to create, change, sync and rebuild one, campaigns.delete to delete it.
const plan = { plan: 'basic' } as const;
const read = { permission: 'intel.view', requires: plan } as const;
const edit = { permission: 'campaigns.edit', requires: plan } as const;
const params = z.object({ id: z.string() });

const columns = z
  .array(z.enum(SHEET_COLUMNS))
  .min(1)
  .refine((list) => new Set(list).size === list.length, 'each column at most once')
  .describe(
    'The columns, in the order wanted. One row per lead: leadId, phone, leadName, leadStatus, leadFields (the JSON the lead was pushed with), ' +
      'calls (how many), and its latest call (the one started last): lastCallId, lastCallStatus, outcome, durationMs, lastCallStartedAt, ' +
      "lastCallEndedAt (ISO 8601 UTC), with that call's intelligence: evaluationScore (0-100) and extractedFields (the agent's extraction " +
      'fields filled from the transcript, { name: value } as JSON), empty until computed; updatedAt: when the row last changed.',
  );
const intervalSeconds = z
  .number()
  .int()
  .min(SHEET_INTERVAL_BOUNDS.min)
  .max(SHEET_INTERVAL_BOUNDS.max)
  .describe(
    `Seconds between scheduled syncs, ${SHEET_INTERVAL_BOUNDS.min} to ${SHEET_INTERVAL_BOUNDS.max} (a day); default ${SHEET_DEFAULT_INTERVAL_SECONDS}.`,
  );

const sheetSchema = z.object({
  id: z.string().uuid(),
  campaignId: z.string().uuid(),
  provider: z
    .string()
    .describe(
      "local: a spreadsheet file on the service's own volume, downloadable here; google: a customer's Google spreadsheet an operator attached (no download here: read it in Google Sheets); google-twin: the same through the local Google Sheets twin.",
    ),
  columns: z.array(z.enum(SHEET_COLUMNS)),
  intervalSeconds: z.number().int(),
  status: z
    .enum(['pending', 'syncing', 'rebuilding', 'idle', 'failed'])
    .describe(
      'pending (never synced yet), syncing, rebuilding (a full pass: the first sync and every rebuild), idle (in sync as of lastSyncAt), failed (see error; tried again at the next scheduled sync).',
    ),
  rows: z.number().int().describe('Lead rows in the sheet (the header row not counted).'),
  cursor: z
    .union([
      z.object({ phase: z.literal('full'), afterLeadId: z.string().nullable(), watermark: z.string() }),
      z.object({ phase: z.literal('changes'), changedAt: z.string(), leadId: z.string() }),
    ])
    .nullable()
    .describe(
      'Where the sync stands: a full pass in lead id order (after afterLeadId), then changes in (changedAt, leadId) order. Null before the first page.',
    ),
  progress: z.object({
    syncNumber: z.number().int().describe('The sync in progress, or the last one.'),
    rowsWritten: z.number().int().describe('Rows written by that sync so far.'),
    syncStartedAt: z.string().nullable().describe('Set while a sync runs.'),
  }),
  lastSyncAt: z.string().nullable(),
  lastSyncRowsWritten: z.number().int().describe('Rows the last finished sync wrote: only rows that changed.'),
  rowsWrittenTotal: z.number().int(),
  error: z.string().nullable(),
  downloadUrls: z
    .object({ csv: z.string(), xlsx: z.string() })
    .nullable()
    .describe(
      'Where to download the sheet (local provider), once a sync has published it; null before, and for a Google sheet.',
    ),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const sheetAnswer = (description: string) => ({ description, schema: sheetSchema });
const unavailable = { 503: [ErrorCode.temporal_unavailable] };
const noSheet = { 404: [ErrorCode.sheet_not_found] };

export const sheetRoutes = [
  defineRoute({
    method: 'post',
    path: '/campaigns/{id}/sheet',
    access: edit,
    summary:
      "Create the campaign's live sheet: a spreadsheet of its leads, their latest outcome and their intelligence, kept in sync by a " +
      'durable workflow at once, then every intervalSeconds and on demand. The provider is local (a spreadsheet file on this ' +
      "service's volume, downloadable as CSV or XLSX). One sheet per campaign: a second is 409 sheet_exists (PATCH or rebuild the one there is).",
    tags: ['Live sheets'],
    params,
    body: z
      .strictObject({ columns: columns.optional(), intervalSeconds: intervalSeconds.optional() })
      .describe('Every field is optional: {} makes a sheet of every column, synced every 300 seconds.'),
    responses: { 201: { ...sheetAnswer('The sheet; its first sync has started.'), headers: ['Location'] } },
    errors: { 409: [ErrorCode.sheet_exists], ...unavailable },
    handler: async ({ services, principal, params, body }) => ({
      status: 201,
      body: await createSheet(services, principal, params.id, {
        columns: body.columns ?? [...SHEET_COLUMNS],
        intervalSeconds: body.intervalSeconds ?? SHEET_DEFAULT_INTERVAL_SECONDS,
      }),
      headers: { Location: `/campaigns/${params.id}/sheet` },
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/{id}/sheet',
    access: read,
    summary:
      "The campaign's live sheet: columns, schedule, rows, status, cursor, the progress of the sync and the last sync.",
    tags: ['Live sheets'],
    params,
    responses: { 200: sheetAnswer('The sheet.') },
    errors: noSheet,
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await findSheet(services, principal, params.id),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/campaigns/{id}/sheet',
    access: edit,
    summary:
      'Change the columns or the schedule. New columns rewrite the sheet from scratch (a rebuild: every row changes); a new ' +
      'intervalSeconds starts a sync at once and counts from its end.',
    tags: ['Live sheets'],
    params,
    body: z
      .strictObject({ columns: columns.optional(), intervalSeconds: intervalSeconds.optional() })
      .refine(
        (patch) => patch.columns !== undefined || patch.intervalSeconds !== undefined,
        'columns or intervalSeconds',
      ),
    responses: { 200: sheetAnswer('The sheet as changed.') },
    errors: { ...noSheet, ...unavailable },
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: await updateSheet(services, principal, params.id, body),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/campaigns/{id}/sheet',
    access: { permission: 'campaigns.delete', requires: plan },
    summary:
      "Delete the live sheet: its workflow stops and deletes the spreadsheet's files. The campaign and its leads are untouched.",
    tags: ['Live sheets'],
    params,
    responses: { 204: { description: 'Deleted.' } },
    errors: noSheet,
    handler: async ({ services, principal, params }) => {
      await deleteSheet(services, principal, params.id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/campaigns/{id}/sheet/sync',
    access: edit,
    summary:
      'Sync now: the rows changed since the last sync are written (a change is taken once it is 2 seconds old). Answered once the ' +
      'workflow has the request (202); follow GET /campaigns/{id}/sheet. Asked during a sync, one more follows it.',
    tags: ['Live sheets'],
    params,
    responses: { 202: sheetAnswer('The sheet, as it stood when the sync was asked for.') },
    errors: { ...noSheet, ...unavailable },
    handler: async ({ services, principal, params }) => ({
      status: 202,
      body: await requestSheetSync(services, principal, params.id, 'sync'),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/campaigns/{id}/sheet/rebuild',
    access: edit,
    summary:
      'Rewrite the sheet from scratch: emptied, its rows assigned afresh in lead order, every lead written once. A sync in progress ' +
      'stops at its next page. 202; follow GET /campaigns/{id}/sheet (status rebuilding, then idle).',
    tags: ['Live sheets'],
    params,
    responses: { 202: sheetAnswer('The sheet, as it stood when the rebuild was asked for.') },
    errors: { ...noSheet, ...unavailable },
    handler: async ({ services, principal, params }) => ({
      status: 202,
      body: await requestSheetSync(services, principal, params.id, 'rebuild'),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/{id}/sheet/download',
    access: read,
    summary:
      'Download the sheet as the last finished sync published it: CSV (UTF-8 with a byte order mark) or XLSX (tab "Leads"), header ' +
      'row first. A text cell starting with =, +, -, @, tab or carriage return gets a leading single quote, as in exports. 409 sheet_not_ready before the first sync finished.',
    tags: ['Live sheets'],
    params,
    query: z.strictObject({ format: z.enum(EXPORT_FORMATS).default('csv').describe('csv (default) or xlsx.') }),
    responses: { 200: { description: 'The file, as an attachment, with Content-Length.', ...exportFile } },
    errors: { ...noSheet, 409: [ErrorCode.sheet_not_ready] },
    handler: async ({ services, principal, params, query, res }) =>
      sendFile(res, await sheetFile(services, principal, params.id, query.format)),
  }),
];
