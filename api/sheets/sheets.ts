import { randomUUID } from 'node:crypto';
import type { LiveSheet } from '../../generated/prisma/client';
import { defaultExportTaskQueue } from '../../lib/config';
import { ErrorCode } from '../../lib/error-codes';
import { EXPORT_CONTENT_TYPES, type ExportFormat } from '../../lib/exports/export-formats';
import { isUniqueViolation } from '../../lib/prisma-errors';
import type { SheetColumn } from '../../lib/sheets/columns';
import { LocalSpreadsheetProvider, localSheetsDir } from '../../lib/sheets/local-provider';
import type { SheetCursor } from '../../lib/sheets/rows';
import type { LiveSheetInput } from '../../lib/sheets/progress';
import { cancelLiveSheet, signalLiveSheet, startLiveSheet } from '../../lib/temporal/sheets';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import { findOwnedCampaign } from '../campaigns/campaigns';
import type { ExportFile } from '../exports/exports';
import type { AppServices } from '../app-services';
import { deleteSheetRow, insertSheet, sheetOfCampaign, updateSheetSettings } from './sheet-store';

export interface SheetSettings {
  columns: SheetColumn[];
  intervalSeconds: number;
}

const sheetPath = (campaignId: string) => `/campaigns/${campaignId}/sheet`;

export function sheetView(sheet: LiveSheet) {
  const download = `${sheetPath(sheet.campaignId)}/download`;
  return {
    id: sheet.id,
    campaignId: sheet.campaignId,
    provider: sheet.provider,
    columns: sheet.columns as SheetColumn[],
    intervalSeconds: sheet.intervalSeconds,
    status: sheet.status as 'pending' | 'syncing' | 'rebuilding' | 'idle' | 'failed',
    rows: sheet.rowCount,
    cursor: (sheet.cursor as SheetCursor | null) ?? null,
    progress: {
      syncNumber: sheet.syncNumber,
      rowsWritten: sheet.syncRowsWritten,
      syncStartedAt: sheet.syncStartedAt?.toISOString() ?? null,
    },
    lastSyncAt: sheet.lastSyncAt?.toISOString() ?? null,
    lastSyncRowsWritten: sheet.lastSyncRowsWritten,
    rowsWrittenTotal: Number(sheet.rowsWrittenTotal),
    error: sheet.error,
    // A Google sheet is read in Google Sheets: only the local provider publishes files here.
    downloadUrls:
      sheet.provider === 'local' && sheet.publishedAt
        ? { csv: `${download}?format=csv`, xlsx: `${download}?format=xlsx` }
        : null,
    createdAt: sheet.createdAt.toISOString(),
    updatedAt: sheet.updatedAt.toISOString(),
  };
}

export type SheetView = ReturnType<typeof sheetView>;

function workflowInput(services: AppServices, sheet: LiveSheet): LiveSheetInput {
  return {
    sheetId: sheet.id,
    spreadsheetId: sheet.spreadsheetId,
    intervalSeconds: sheet.intervalSeconds,
    activityTaskQueue: services.exports.taskQueue ?? defaultExportTaskQueue(services.taskQueue),
  };
}

async function findOwnedSheet(services: AppServices, principal: Principal, campaignId: string): Promise<LiveSheet> {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const sheet = await sheetOfCampaign(services.db, campaign.id);
  if (!sheet) throw new Refusal(ErrorCode.sheet_not_found);
  return sheet;
}

/**
 * Creates the campaign's sheet and starts its workflow, which syncs it at once. One sheet per campaign:
 * a second is 409 sheet_exists. Without its workflow the sheet is not kept: 503, and nothing remains.
 */
export async function createSheet(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  settings: SheetSettings,
): Promise<SheetView> {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const id = randomUUID();
  const sheet = await insertSheet(services.db, {
    id,
    workspaceId: principal.workspaceId,
    campaignId: campaign.id,
    provider: 'local',
    // The local provider names a spreadsheet by the key it is created with.
    spreadsheetId: id,
    columns: settings.columns,
    intervalSeconds: settings.intervalSeconds,
  }).catch((error: unknown) => {
    if (isUniqueViolation(error)) throw new Refusal(ErrorCode.sheet_exists);
    throw error;
  });
  try {
    await startLiveSheet(services.temporal, services.taskQueue, workflowInput(services, sheet), {
      campaignId: campaign.id,
      workspaceId: principal.workspaceId,
    });
  } catch (error) {
    await deleteSheetRow(services.db, sheet.id).catch(() => undefined);
    throw error;
  }
  return sheetView(sheet);
}

export async function findSheet(services: AppServices, principal: Principal, campaignId: string): Promise<SheetView> {
  return sheetView(await findOwnedSheet(services, principal, campaignId));
}

/** Signals the sheet's workflow (starting it again should it have ended: lib/temporal/sheets.ts). */
async function tellWorkflow(services: AppServices, sheet: LiveSheet, signal: 'sync' | 'rebuild') {
  await signalLiveSheet(
    services.temporal,
    services.taskQueue,
    workflowInput(services, sheet),
    { campaignId: sheet.campaignId, workspaceId: sheet.workspaceId },
    signal,
  );
}

export async function requestSheetSync(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  kind: 'sync' | 'rebuild',
): Promise<SheetView> {
  const sheet = await findOwnedSheet(services, principal, campaignId);
  await tellWorkflow(services, sheet, kind);
  return sheetView(sheet);
}

/** New columns rewrite the sheet (a rebuild); a new schedule is taken by a sync at once. */
export async function updateSheet(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  patch: Partial<SheetSettings>,
): Promise<SheetView> {
  const sheet = await findOwnedSheet(services, principal, campaignId);
  const columnsChanged = patch.columns !== undefined && JSON.stringify(patch.columns) !== JSON.stringify(sheet.columns);
  const updated = await updateSheetSettings(services.db, sheet.id, {
    ...(patch.columns && { columns: patch.columns }),
    ...(patch.intervalSeconds && { intervalSeconds: patch.intervalSeconds }),
  });
  if (columnsChanged) await tellWorkflow(services, updated, 'rebuild');
  else if (patch.intervalSeconds !== undefined) await tellWorkflow(services, updated, 'sync');
  return sheetView(updated);
}

/**
 * Deletes the sheet: its row (and its rows' positions) at once, then its workflow is cancelled and
 * deletes the spreadsheet's files once no chunk writes to them. Should the cancellation not reach
 * Temporal, the workflow finds the row gone at its next sync and does the same.
 */
export async function deleteSheet(services: AppServices, principal: Principal, campaignId: string): Promise<void> {
  const sheet = await findOwnedSheet(services, principal, campaignId);
  await deleteSheetRow(services.db, sheet.id);
  await cancelLiveSheet(services.temporal, sheet.id).catch(() => undefined);
}

/** The spreadsheet as a file, as the last finished sync published it; 409 sheet_not_ready before the first. */
export async function sheetFile(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  format: ExportFormat,
): Promise<ExportFile & { size: number }> {
  const sheet = await findOwnedSheet(services, principal, campaignId);
  if (sheet.provider !== 'local')
    throw new Refusal(ErrorCode.sheet_not_ready, { status: sheet.status, provider: sheet.provider });
  const provider = new LocalSpreadsheetProvider(localSheetsDir(services.exports.dir));
  const file = await provider.download(sheet.spreadsheetId, format);
  if (!file) throw new Refusal(ErrorCode.sheet_not_ready, { status: sheet.status });
  return {
    contentType: EXPORT_CONTENT_TYPES[format],
    fileName: `sheet-${campaignId}.${format}`,
    ...file,
  };
}
