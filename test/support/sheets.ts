import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import type { Database } from '../../lib/database';
import type { RunningApi } from './api';
import { until } from './until';

/** What GET /campaigns/{id}/sheet answers, as far as the tests read it. */
export interface SheetAnswer {
  id: string;
  status: string;
  rows: number;
  columns: string[];
  intervalSeconds: number;
  progress: { syncNumber: number; rowsWritten: number };
  lastSyncAt: string | null;
  lastSyncRowsWritten: number;
  rowsWrittenTotal: number;
  cursor: unknown;
  downloadUrls: { csv: string; xlsx: string } | null;
}

/** A sheet takes a change once it is SHEET_SETTLE_MS (2 s) old: tests wait this long after writing. */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 2_100));

export function sheetClient(api: RunningApi, key: string) {
  const path = (campaignId: string) => `/campaigns/${campaignId}/sheet`;
  const read = async (campaignId: string) => {
    const response = await api.request('GET', path(campaignId), { key });
    if (response.status !== 200) throw new Error(`GET sheet: ${response.status} ${await response.text()}`);
    return (await response.json()) as SheetAnswer;
  };
  return {
    path,
    read,
    /** Waits for a sync numbered after `afterSync` to finish. */
    synced: (campaignId: string, afterSync: number, timeoutMs?: number) =>
      until(
        () => read(campaignId),
        (sheet) => sheet.progress.syncNumber > afterSync && sheet.status === 'idle',
        timeoutMs,
      ),
    async download(campaignId: string, format: 'csv' | 'xlsx'): Promise<string[][]> {
      const response = await api.request('GET', `${path(campaignId)}/download?format=${format}`, { key });
      if (response.status !== 200) throw new Error(`download: ${response.status} ${await response.text()}`);
      const bytes = Buffer.from(await response.arrayBuffer());
      if (format === 'csv') return parse(bytes.toString('utf8').replace(/^\uFEFF/, '')) as string[][];
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
      const rows: string[][] = [];
      workbook
        .getWorksheet('Leads')!
        .eachRow({ includeEmpty: true }, (row) =>
          rows.push(
            (row.values as unknown[])
              .slice(1)
              .map((value) => (typeof value === 'string' || typeof value === 'number' ? String(value) : '')),
          ),
        );
      return rows;
    },
  };
}

/** `count` leads of a campaign in one statement, named "Lead <n>" with phones +1415000<n>. */
export async function insertLeads(
  db: Database,
  campaign: { id: string; workspaceId: string },
  count: number,
  from = 1,
) {
  await db.$executeRaw`
    INSERT INTO "Lead" (id, "workspaceId", "campaignId", "idempotencyKey", phone, name, fields, "workflowId", "requestId", "updatedAt")
    SELECT gen_random_uuid(), ${campaign.workspaceId}::uuid, ${campaign.id}::uuid, 'sheet-' || g || '-' || ${randomUUID()}, '+1415' || lpad(g::text, 7, '0'),
      'Lead ' || g, jsonb_build_object('n', g), 'not-started-' || g, gen_random_uuid(), now()
    FROM generate_series(${from}::int, ${from + count - 1}::int) g`;
}
