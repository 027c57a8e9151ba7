import { describe, expect, it } from 'vitest';
import { EXPORT_PAGE_BYTES, nextPageRows } from '../../lib/exports/export-page-size';

describe('export job page size', () => {
  it('starts at the most rows a page may hold', () => {
    expect(nextPageRows(1000, { rows: 0, bytes: 0 })).toBe(1000);
  });

  it('keeps narrow rows at the most rows, and shrinks pages of wide rows to about EXPORT_PAGE_BYTES', () => {
    expect(nextPageRows(1000, { rows: 1000, bytes: 240_000 })).toBe(1000);
    const wide = nextPageRows(1000, { rows: 1000, bytes: 1000 * 1200 });
    expect(wide).toBe(Math.floor(EXPORT_PAGE_BYTES / 1200));
    expect(wide * 1200).toBeLessThanOrEqual(EXPORT_PAGE_BYTES);
  });

  it('reads at least one row, however wide', () => {
    expect(nextPageRows(1000, { rows: 1, bytes: 50 * 1024 * 1024 })).toBe(1);
  });
});
