import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type ExcelJS from 'exceljs';
import type { ExportCell, ExportColumn, ExportRow } from './export-rows';

export const EXPORT_FORMATS = ['csv', 'xlsx'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** A sheet holds 1,048,576 rows; the header takes one. Larger exports continue on "Calls 2", "Calls 3"… */
export const XLSX_ROWS_PER_SHEET = 1_048_575;

// OWASP CSV injection: a spreadsheet runs a cell that starts with one of these as a formula.
const FORMULA_START = /^[=+\-@\t\r]/;

/** A leading single quote makes a spreadsheet show the text instead of evaluating it. */
export function neutralise(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

function cell(value: ExportCell): string | number {
  if (value === null) return '';
  return typeof value === 'number' ? value : neutralise(value);
}

const rowCells = (row: ExportRow, columns: readonly ExportColumn[]) => columns.map((column) => cell(row[column]));

/**
 * The start of a CSV file: a UTF-8 byte order mark, without which Excel reads the file in the
 * machine's legacy code page and garbles names, then the header line.
 */
export function csvHead(columns: readonly ExportColumn[]): Buffer {
  return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(stringify([columns as ExportColumn[]]))]);
}

/** Whole lines of CSV (RFC 4180 quoting), so a file can be cut after any page and appended to again. */
export function csvLines(rows: ExportRow[], columns: readonly ExportColumn[]): Buffer {
  return Buffer.from(stringify(rows.map((row) => rowCells(row, columns))));
}

export interface XlsxWriter {
  add(rows: ExportRow[]): void;
  commit(): Promise<void>;
}

/**
 * exceljs's streaming writer: each row is serialised and handed to the zip as it is added, with
 * inline strings (no shared-string table growing with the file), so memory stays flat. Loaded on
 * first use: it weighs some 25 MB, which a worker that only ever writes CSV need not carry.
 */
export async function createXlsxWriter(output: Writable, columns: readonly ExportColumn[]): Promise<XlsxWriter> {
  const { default: excel } = await import('exceljs');
  const workbook = new excel.stream.xlsx.WorkbookWriter({ stream: output, useSharedStrings: false, useStyles: false });
  let sheet: ExcelJS.Worksheet | null = null;
  let sheets = 0;
  let rowsInSheet = 0;
  return {
    add(rows) {
      for (const row of rows) {
        if (!sheet || rowsInSheet === XLSX_ROWS_PER_SHEET) {
          sheet?.commit();
          sheets += 1;
          sheet = workbook.addWorksheet(sheets === 1 ? 'Calls' : `Calls ${sheets}`);
          sheet.addRow([...columns]).commit();
          rowsInSheet = 0;
        }
        sheet.addRow(rowCells(row, columns)).commit();
        rowsInSheet += 1;
      }
    },
    async commit() {
      if (!sheet)
        workbook
          .addWorksheet('Calls')
          .addRow([...columns])
          .commit();
      await workbook.commit();
    },
  };
}
