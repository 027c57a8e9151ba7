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
const valueCells = (values: readonly ExportCell[]) => values.map(cell);

/**
 * The start of a CSV file: a UTF-8 byte order mark, without which Excel reads the file in the
 * machine's legacy code page and garbles names, then the header line.
 */
export function csvHead(columns: readonly string[]): Buffer {
  return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(stringify([[...columns]]))]);
}

/** Whole lines of CSV (RFC 4180 quoting), so a file can be cut after any page and appended to again. */
export function csvLines(rows: ExportRow[], columns: readonly ExportColumn[]): Buffer {
  return Buffer.from(stringify(rows.map((row) => rowCells(row, columns))));
}

/** The same lines from rows of cells in column order (a live sheet's rows). */
export function csvValueLines(rows: readonly (readonly ExportCell[])[]): Buffer {
  return Buffer.from(stringify(rows.map(valueCells)));
}

export interface XlsxWriter {
  add(rows: ExportRow[]): void;
  /** Rows of cells in the header's column order (a live sheet's rows). */
  addValues(rows: readonly (readonly ExportCell[])[]): void;
  commit(): Promise<void>;
}

/**
 * exceljs's streaming writer: each row is serialised and handed to the zip as it is added, with
 * inline strings (no shared-string table growing with the file), so memory stays flat. Loaded on
 * first use: it weighs some 25 MB, which a worker that only ever writes CSV need not carry.
 */
export async function createXlsxWriter(
  output: Writable,
  header: readonly string[],
  sheetName = 'Calls',
): Promise<XlsxWriter> {
  const { default: excel } = await import('exceljs');
  const workbook = new excel.stream.xlsx.WorkbookWriter({ stream: output, useSharedStrings: false, useStyles: false });
  let sheet: ExcelJS.Worksheet | null = null;
  let sheets = 0;
  let rowsInSheet = 0;
  const writer: XlsxWriter = {
    add(rows) {
      writer.addValues(rows.map((row) => header.map((column) => row[column as ExportColumn])));
    },
    addValues(rows) {
      for (const values of rows) {
        if (!sheet || rowsInSheet === XLSX_ROWS_PER_SHEET) {
          sheet?.commit();
          sheets += 1;
          sheet = workbook.addWorksheet(sheets === 1 ? sheetName : `${sheetName} ${sheets}`);
          sheet.addRow([...header]).commit();
          rowsInSheet = 0;
        }
        sheet.addRow(valueCells(values)).commit();
        rowsInSheet += 1;
      }
    },
    async commit() {
      if (!sheet)
        workbook
          .addWorksheet(sheetName)
          .addRow([...header])
          .commit();
      await workbook.commit();
    },
  };
  return writer;
}
