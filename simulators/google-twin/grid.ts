import { randomBytes } from 'node:crypto';
import { GOOGLE_ERRORS } from './errors';

/** What a cell holds after a RAW write: a string, a number or a boolean; undefined: empty. */
export type Cell = string | number | boolean;

export interface Tab {
  sheetId: number;
  title: string;
  index: number;
  rowCount: number;
  columnCount: number;
  /** rows[r][c], 0-based; holes are empty cells. */
  rows: (Cell | undefined)[][];
}

export interface TwinSpreadsheet {
  spreadsheetId: string;
  title: string;
  /** The e-mails it is shared with (as editors): only these service accounts reach it. */
  editors: Set<string>;
  tabs: Tab[];
}

/** Google's limit of cells in a spreadsheet. */
export const MAX_CELLS = 10_000_000;
/** A new tab's grid, as Google makes it. */
export const NEW_TAB_GRID = { rowCount: 1_000, columnCount: 26 };

/** A spreadsheet id as Google assigns them: 44 characters of [A-Za-z0-9_-]. */
export const newSpreadsheetId = () => randomBytes(33).toString('base64url');

export function newTab(
  title: string,
  index: number,
  grid = NEW_TAB_GRID,
  sheetId = index === 0 ? 0 : randomSheetId(),
): Tab {
  return { sheetId, title, index, rowCount: grid.rowCount, columnCount: grid.columnCount, rows: [] };
}

const randomSheetId = () => randomBytes(4).readUInt32BE() & 0x7fffffff;

/** A range in A1 notation resolved on a spreadsheet: 0-based, end exclusive; undefined end: to the grid's edge. */
export interface GridRange {
  tab: Tab;
  startRow: number;
  endRow?: number;
  startColumn: number;
  endColumn?: number;
}

const CELL = /^([A-Z]+)?(\d+)?$/;

/**
 * A1 notation's columns as Google's Sheets API documents them (https://developers.google.com/workspace/sheets/api/guides/concepts#cell):
 * A to Z, then AA to AZ, BA… ZZ, AAA…: bijective base 26, A being 1. The twin's own reading, not the product's
 * (lib/sheets/a1.ts), so that a product misnumbering columns writes where Google would, and the test sees it.
 */
function columnIndex(letters: string): number {
  return [...letters].reduce((number, letter) => number * 26 + (letter.charCodeAt(0) - 'A'.charCodeAt(0) + 1), 0) - 1;
}

/** The letters of the 0-based column `index` (0: A, 25: Z, 26: AA). */
function columnLetters(index: number): string {
  let letters = '';
  for (let number = index + 1; number > 0; number = Math.floor((number - 1) / 26))
    letters = String.fromCharCode('A'.charCodeAt(0) + ((number - 1) % 26)) + letters;
  return letters;
}

/** Parses `Tab`, `'Tab'!A1`, `Tab!A1:C3`, `Tab!A2:C` and `Tab!A:C`; a range without a tab is on the first tab. */
export function resolveRange(spreadsheet: TwinSpreadsheet, range: string): GridRange {
  const bang = range.lastIndexOf('!');
  const tabPart = bang < 0 ? range : range.slice(0, bang);
  const cells = bang < 0 ? '' : range.slice(bang + 1);
  const title = tabPart.replace(/^'(.*)'$/, '$1').replace(/''/g, "'");
  let tab = spreadsheet.tabs.find((candidate) => candidate.title === title);
  let cellPart = cells;
  if (!tab && bang < 0) {
    // No tab named so: the whole range is cells of the first tab.
    tab = spreadsheet.tabs[0];
    cellPart = range;
  }
  if (!tab) throw GOOGLE_ERRORS.invalid(`Unable to parse range: ${range}`);
  if (cellPart === '') return { tab, startRow: 0, startColumn: 0 };
  const [from, to, extra] = cellPart.split(':');
  const start = CELL.exec(from ?? '');
  const end = to === undefined ? start : CELL.exec(to);
  if (extra !== undefined || !start || !end || (!start[1] && !start[2]))
    throw GOOGLE_ERRORS.invalid(`Unable to parse range: ${range}`);
  return {
    tab,
    startRow: start[2] ? Number(start[2]) - 1 : 0,
    endRow: end[2] ? Number(end[2]) : undefined,
    startColumn: start[1] ? columnIndex(start[1]) : 0,
    endColumn: end[1] ? columnIndex(end[1]) + 1 : undefined,
  };
}

/** The range as Google echoes it: `Leads!A2:O2` (quoted when the title needs it). */
export function a1Of(tab: Tab, startRow: number, endRow: number, startColumn: number, endColumn: number): string {
  const title = /^[A-Za-z0-9_]+$/.test(tab.title) ? tab.title : `'${tab.title.replace(/'/g, "''")}'`;
  const from = `${columnLetters(startColumn)}${startRow + 1}`;
  const to = `${columnLetters(endColumn - 1)}${endRow}`;
  return from === to ? `${title}!${from}` : `${title}!${from}:${to}`;
}

/** Refuses a range that reaches past the tab's grid, as Google does. */
export function checkGrid(range: string, target: GridRange, rows: number, columns: number): void {
  const { tab } = target;
  if (target.startRow + rows > tab.rowCount || target.startColumn + columns > tab.columnCount)
    throw GOOGLE_ERRORS.gridLimits(range, tab.rowCount, tab.columnCount);
  if ((target.endRow ?? Infinity) > tab.rowCount || (target.endColumn ?? 0) > tab.columnCount)
    throw GOOGLE_ERRORS.gridLimits(range, tab.rowCount, tab.columnCount);
}

export const cellCount = (spreadsheet: TwinSpreadsheet) =>
  spreadsheet.tabs.reduce((sum, tab) => sum + tab.rowCount * tab.columnCount, 0);

/** The tab's values, as values.get answers them: trailing empty rows and cells dropped. */
export function tabValues(tab: Tab): Cell[][] {
  const rows = Array.from(tab.rows, (row) => {
    const cells = [...(row ?? [])];
    while (cells.length && cells.at(-1) === undefined) cells.pop();
    return Array.from(cells, (cell) => cell ?? '');
  });
  while (rows.length && rows.at(-1)!.length === 0) rows.pop();
  return rows;
}
