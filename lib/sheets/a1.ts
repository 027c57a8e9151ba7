/**
 * A1 notation, as the Google Sheets API addresses cells: columns A..Z, AA..ZZ, …; rows from 1.
 * "Leads!A2:O2" is row 2 from column A to column O of the tab "Leads".
 */
export function columnLetters(index: number): string {
  let letters = '';
  for (let rest = index + 1; rest > 0; rest = Math.floor((rest - 1) / 26))
    letters = String.fromCharCode(65 + ((rest - 1) % 26)) + letters;
  return letters;
}

export function columnIndex(letters: string): number {
  let index = 0;
  for (const letter of letters) index = index * 26 + (letter.charCodeAt(0) - 64);
  return index - 1;
}

/** The range of `rows` rows of `width` cells from row `firstRow`, column A. */
export function rowRange(tab: string, firstRow: number, width: number, rows = 1): string {
  return `${tab}!A${firstRow}:${columnLetters(width - 1)}${firstRow + rows - 1}`;
}

export interface ParsedRange {
  tab: string;
  firstRow: number;
  /** Inclusive; undefined: open-ended ("Leads!A2:O"). */
  lastRow: number | undefined;
  firstColumn: number;
}

const RANGE = /^(?:'?([^'!]+)'?!)?([A-Z]+)(\d+)?(?::([A-Z]+)(\d+)?)?$/;

/** Parses the ranges this service writes: TAB!A1, TAB!A1:C3, TAB!A2:C (open-ended). */
export function parseRange(range: string, defaultTab: string): ParsedRange {
  const match = RANGE.exec(range);
  if (!match) throw new Error(`not an A1 range: ${range}`);
  const [, tab, firstColumn, firstRow, , lastRow] = match;
  return {
    tab: tab ?? defaultTab,
    firstRow: firstRow ? Number(firstRow) : 1,
    lastRow: lastRow ? Number(lastRow) : firstRow && !match[4] ? Number(firstRow) : undefined,
    firstColumn: columnIndex(firstColumn!),
  };
}
