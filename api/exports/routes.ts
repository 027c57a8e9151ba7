import type { Response } from 'express';
import { z } from 'zod';
import { ErrorCode } from '../../lib/error-codes';
import { EXPORT_CONTENT_TYPES, EXPORT_FORMATS } from '../../lib/exports/export-formats';
import { EXPORT_COLUMNS } from '../../lib/exports/export-rows';
import { defineRoute } from '../http/route';
import { storableInstantSchema } from '../http/storable-input';
import { createExport, exportJobFile, findExportJob, type ExportFile } from './exports';

const access = { permission: 'intel.view', requires: { plan: 'basic' } } as const;
const campaignParams = z.object({ id: z.string() });
const jobParams = z.object({ id: z.string(), exportId: z.string() });

const exportBody = z
  .strictObject({
    format: z
      .enum(EXPORT_FORMATS)
      .default('csv')
      .describe(
        'csv (UTF-8 with a byte order mark, RFC 4180 quoting) or xlsx (sheet "Calls"; past 1,048,575 rows the next sheets are "Calls 2", "Calls 3"…). Default csv.',
      ),
    columns: z
      .array(z.enum(EXPORT_COLUMNS))
      .min(1)
      .refine((columns) => new Set(columns).size === columns.length, 'each column at most once')
      .optional()
      .describe(
        'The columns, in the order wanted; default all of them in the order listed. One row per call: callId, leadId, phone, leadName, ' +
          'attempt, status, outcome, durationMs, startedAt, endedAt (ISO 8601 UTC), provider, simulated (true when the simulated carrier placed the call: nobody was called, its outcome invented; else false), leadFields (the JSON the lead was pushed with), ' +
          "and the call intelligence: evaluationScore (0-100) and extractedFields (the agent's extraction fields filled from the transcript, { name: value } as JSON), empty until computed. A text cell starting with =, +, -, @, tab or carriage " +
          "return gets a leading single quote (OWASP CSV injection), in CSV and XLSX alike: phones read '+14155550120.",
      ),
    from: storableInstantSchema
      .optional()
      .describe(
        'Only calls started at or after this instant (RFC 3339, with seconds and offset: 2026-11-01T00:00:00Z). Default: the first call.',
      ),
    to: storableInstantSchema
      .optional()
      .describe(
        'Only calls started before this instant (exclusive). Default, and at most: the time of the request, so later calls never enter the file.',
      ),
  })
  .refine((body) => !body.from || !body.to || Date.parse(body.from) < Date.parse(body.to), {
    path: ['to'],
    message: 'to must be after from',
  })
  .describe('Every field is optional: {} exports every call of the campaign as CSV with every column.');

const progress = {
  rowsWritten: z.number().int().describe('Rows in the file so far.'),
  totalRows: z.number().int().describe('Calls counted when the job was created; once completed, the rows in the file.'),
  percent: z.number().int().describe('0 to 100; 100 only once the file can be downloaded.'),
};

const jobSchema = z.object({
  id: z.string().uuid(),
  status: z
    .enum(['queued', 'running', 'completed', 'failed', 'expired'])
    .describe(
      'queued (no worker has taken it yet), running, completed (downloadUrl is set), failed (see error), expired (the file was deleted after its retention).',
    ),
  format: z.enum(EXPORT_FORMATS),
  ...progress,
  downloadUrl: z
    .string()
    .nullable()
    .describe('Path of the file while it can be downloaded (status completed), else null.'),
  expiresAt: z
    .string()
    .nullable()
    .describe('When the file is deleted: EXPORT_RETENTION_HOURS (default 24) after the job finished.'),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  error: z.string().nullable(),
});

/** An export file as the answer describes it: its bytes, in one of the formats' media types. */
export const exportFile = {
  schema: z.string(),
  contentType: Object.values(EXPORT_CONTENT_TYPES).map((type) => type.split(';')[0]!),
};

/** A file answer: the routes write it themselves, streamed, instead of a JSON body. */
export async function sendFile(res: Response, file: ExportFile & { size?: number }) {
  res.status(200).set({
    'Content-Type': file.contentType,
    'Content-Disposition': `attachment; filename="${file.fileName}"`,
    // Calls and lead data: never kept by a shared cache.
    'Cache-Control': 'no-store',
    ...(file.size === undefined ? {} : { 'Content-Length': String(file.size) }),
  });
  await file.write(res);
  return { status: 200 };
}

export const exportRoutes = [
  defineRoute({
    method: 'post',
    path: '/campaigns/{id}/exports',
    access,
    summary:
      "Export the campaign's calls and extracted intelligence as CSV or XLSX. Up to EXPORT_INLINE_MAX_ROWS calls (default 5000) " +
      'the answer is the file itself (200, Content-Disposition: attachment). Above it the answer is 202 { job } with a Location header: a ' +
      'durable job (a Temporal workflow) writes the file; follow it at GET /campaigns/{id}/exports/{exportId}, then download it from ' +
      'downloadUrl for EXPORT_RETENTION_HOURS (default 24), after which it is deleted (410 export_expired).',
    tags: ['Exports'],
    params: campaignParams,
    body: exportBody,
    responses: {
      200: { description: 'The file, as an attachment: CSV (UTF-8) or XLSX as asked.', ...exportFile },
      202: {
        description: 'Too many rows to answer inline: the job that writes the file.',
        schema: z.object({ job: jobSchema }),
        headers: ['Location'],
      },
    },
    errors: { 503: [ErrorCode.temporal_unavailable] },
    handler: async ({ services, principal, params, body, res }) => {
      const created = await createExport(services, principal, params.id, {
        ...body,
        columns: body.columns ?? [...EXPORT_COLUMNS],
      });
      if ('file' in created) return sendFile(res, created.file);
      return {
        status: 202,
        body: { job: created.job },
        headers: { Location: `/campaigns/${params.id}/exports/${created.job.id}` },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/{id}/exports/{exportId}',
    access,
    summary: "An export job's status and progress. An unknown id, or one of another campaign, is 403 forbidden.",
    tags: ['Exports'],
    params: jobParams,
    responses: { 200: { description: 'The job.', schema: jobSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: await findExportJob(services, principal, params.id, params.exportId),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/campaigns/{id}/exports/{exportId}/file',
    access,
    summary:
      "Download an export job's file, streamed from the export volume: 409 export_not_ready (with status and percent) while it is " +
      'queued or running, 409 export_failed (with reason) if the job failed, 410 export_expired once its retention is over.',
    tags: ['Exports'],
    params: jobParams,
    responses: { 200: { description: 'The file, as an attachment, with Content-Length.', ...exportFile } },
    errors: { 409: [ErrorCode.export_not_ready, ErrorCode.export_failed], 410: [ErrorCode.export_expired] },
    handler: async ({ services, principal, params, res }) =>
      sendFile(res, await exportJobFile(services, principal, params.id, params.exportId)),
  }),
];
