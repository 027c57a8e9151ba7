import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { finished, pipeline } from 'node:stream/promises';
import { once } from 'node:events';
import type { ExportCell } from '../exports/export-rows';
import { createXlsxWriter, csvHead, csvValueLines, type ExportFormat } from '../exports/export-formats';
import { parseRange, rowRange } from './a1';
import type { SpreadsheetFile, SpreadsheetProvider, ValueRange } from './provider';

/** Rows per block file: a write reads and rewrites only the blocks its rows fall in. */
export const LOCAL_BLOCK_ROWS = 1_000;

type Block = (ExportCell[] | null)[];

interface Meta {
  title: string;
  tab: string;
}

const blockName = (block: number) => `block-${String(block).padStart(6, '0')}.json`;

/**
 * The `local` spreadsheet provider: a spreadsheet kept as files on this machine, in
 * <EXPORT_DIR>/sheets/<spreadsheetId>/. Its cells live in block files of LOCAL_BLOCK_ROWS rows
 * (cells/block-000000.json holds rows 1-1000), each replaced whole by a write (written beside it, then
 * renamed): a block is always either its old or its new content, and writing the same values again
 * gives the same file. `flush` publishes the spreadsheet as sheet.csv and sheet.xlsx, the files a
 * download serves, streamed block by block so that memory stays flat however long the sheet is.
 * It is not Google Sheets and talks to no one.
 */
export class LocalSpreadsheetProvider implements SpreadsheetProvider {
  readonly name = 'local';

  constructor(private readonly dir: string) {}

  private folder(spreadsheetId: string) {
    return path.join(this.dir, path.basename(spreadsheetId));
  }

  private cells(spreadsheetId: string) {
    return path.join(this.folder(spreadsheetId), 'cells');
  }

  private async meta(spreadsheetId: string): Promise<Meta> {
    return JSON.parse(await readFile(path.join(this.folder(spreadsheetId), 'meta.json'), 'utf8')) as Meta;
  }

  private async readBlock(spreadsheetId: string, block: number): Promise<Block> {
    return readFile(path.join(this.cells(spreadsheetId), blockName(block)), 'utf8').then(
      (text) => JSON.parse(text) as Block,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return [];
        throw error;
      },
    );
  }

  private async writeBlock(spreadsheetId: string, block: number, rows: Block): Promise<void> {
    const file = path.join(this.cells(spreadsheetId), blockName(block));
    await replaceFile(file, JSON.stringify(rows));
  }

  /** The block numbers that hold rows, in order. */
  private async blocks(spreadsheetId: string): Promise<number[]> {
    const names = await readdir(this.cells(spreadsheetId)).catch(() => [] as string[]);
    return names
      .map((name) => /^block-(\d+)\.json$/.exec(name)?.[1])
      .filter((number): number is string => number !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }

  async create({ key, title, tab }: { key: string; title: string; tab: string }) {
    await mkdir(this.cells(key), { recursive: true });
    await replaceFile(path.join(this.folder(key), 'meta.json'), JSON.stringify({ title, tab } satisfies Meta));
    return { spreadsheetId: key };
  }

  async batchUpdateValues(spreadsheetId: string, data: ValueRange[]) {
    const { tab } = await this.meta(spreadsheetId);
    // Rows by block, so that each block file is read and replaced once per call.
    const byBlock = new Map<number, Array<{ offset: number; firstColumn: number; values: ExportCell[] }>>();
    let totalUpdatedRows = 0;
    for (const { range, values } of data) {
      const target = parseRange(range, tab);
      if (target.tab !== tab) throw new Error(`no tab ${target.tab} in spreadsheet ${spreadsheetId}`);
      values.forEach((rowValues, index) => {
        const row = target.firstRow + index - 1;
        const block = Math.floor(row / LOCAL_BLOCK_ROWS);
        const writes = byBlock.get(block) ?? [];
        writes.push({ offset: row % LOCAL_BLOCK_ROWS, firstColumn: target.firstColumn, values: rowValues });
        byBlock.set(block, writes);
        totalUpdatedRows += 1;
      });
    }
    for (const [block, writes] of [...byBlock].sort(([a], [b]) => a - b)) {
      const rows = await this.readBlock(spreadsheetId, block);
      for (const { offset, firstColumn, values } of writes) {
        while (rows.length <= offset) rows.push(null);
        const cells = [...(rows[offset] ?? [])];
        values.forEach((value, column) => (cells[firstColumn + column] = value));
        rows[offset] = Array.from(cells, (value) => value ?? null);
      }
      await this.writeBlock(spreadsheetId, block, rows);
    }
    return { totalUpdatedRows };
  }

  async appendValues(spreadsheetId: string, range: string, values: ExportCell[][]) {
    const { tab } = await this.meta(spreadsheetId);
    const lastRow = await this.lastRow(spreadsheetId);
    const width = Math.max(1, ...values.map((row) => row.length));
    const appended = rowRange(tab, Math.max(parseRange(range, tab).firstRow, lastRow + 1), width, values.length);
    await this.batchUpdateValues(spreadsheetId, [{ range: appended, values }]);
    return { updatedRange: appended };
  }

  /** The last row holding a value (0 for an empty sheet). */
  private async lastRow(spreadsheetId: string): Promise<number> {
    for (const block of (await this.blocks(spreadsheetId)).reverse()) {
      const rows = await this.readBlock(spreadsheetId, block);
      for (let offset = rows.length - 1; offset >= 0; offset--)
        if (rows[offset]?.some((value) => value !== null)) return block * LOCAL_BLOCK_ROWS + offset + 1;
    }
    return 0;
  }

  async clearValues(spreadsheetId: string, range: string) {
    const { tab } = await this.meta(spreadsheetId);
    const target = parseRange(range, tab);
    if (target.firstRow !== 1 || target.lastRow !== undefined || target.firstColumn !== 0)
      throw new Error(`the local provider clears whole tabs only (${tab}!A1:ZZ), not ${range}`);
    await rm(this.cells(spreadsheetId), { recursive: true, force: true });
    await mkdir(this.cells(spreadsheetId), { recursive: true });
  }

  /** Every row in order, one block at a time; a row never written (a gap) is an empty row. */
  private async *rows(spreadsheetId: string): AsyncGenerator<ExportCell[][]> {
    let expected = 0;
    for (const block of await this.blocks(spreadsheetId)) {
      for (; expected < block; expected++) yield Array.from({ length: LOCAL_BLOCK_ROWS }, () => []);
      yield (await this.readBlock(spreadsheetId, block)).map((row) => row ?? []);
      expected = block + 1;
    }
  }

  /**
   * Publishes sheet.csv and sheet.xlsx from the cells, in one pass over the blocks: each file is written
   * beside its target, then renamed into place, so a download reads the previous files until then.
   */
  async flush(spreadsheetId: string) {
    const { tab } = await this.meta(spreadsheetId);
    const folder = this.folder(spreadsheetId);
    const header = ((await this.readBlock(spreadsheetId, 0))[0] ?? []).map((value) => String(value ?? ''));
    const parts = { csv: path.join(folder, 'sheet.csv.part'), xlsx: path.join(folder, 'sheet.xlsx.part') };
    const csv = createWriteStream(parts.csv);
    const xlsx = createWriteStream(parts.xlsx);
    const workbook = await createXlsxWriter(xlsx, header, tab);
    csv.write(csvHead(header));
    let first = true;
    for await (const block of this.rows(spreadsheetId)) {
      const rows = first ? block.slice(1) : block;
      first = false;
      workbook.addValues(rows);
      // Wait for the CSV stream to drain when it asks to, so that a long sheet is never buffered whole.
      if (!csv.write(csvValueLines(rows))) await once(csv, 'drain');
    }
    csv.end();
    await Promise.all([finished(csv), workbook.commit().then(() => finished(xlsx))]);
    await rename(parts.csv, path.join(folder, 'sheet.csv'));
    await rename(parts.xlsx, path.join(folder, 'sheet.xlsx'));
  }

  async download(spreadsheetId: string, format: ExportFormat): Promise<SpreadsheetFile | null> {
    const file = path.join(this.folder(spreadsheetId), `sheet.${format}`);
    const size = await stat(file).then(
      (stats) => stats.size,
      () => null,
    );
    if (size === null) return null;
    return { size, write: (output) => pipeline(createReadStream(file), output) };
  }

  async delete(spreadsheetId: string) {
    await rm(this.folder(spreadsheetId), { recursive: true, force: true });
  }
}

/** Writes a file beside its target and renames it into place: readers see the old or the new content, whole. */
async function replaceFile(file: string, content: string): Promise<void> {
  const part = `${file}.part`;
  await writeFile(part, content);
  await rename(part, file);
}

/** Where the local provider keeps its spreadsheets: beside the export files, on the volume the API shares. */
export const localSheetsDir = (exportDir: string) => path.join(exportDir, 'sheets');
