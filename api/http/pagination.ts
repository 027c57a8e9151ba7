import { z } from 'zod';
import { UUID_PATTERN } from '../../lib/uuid';

/**
 * A whole number in a query string, written in decimal digits. Not z.coerce.number(): it reads `offset=`
 * and ` ` as 0, `0x10` as 16 and `1e2` as 100, values no client meant (found by the fuzzer).
 */
function queryInteger(min: number, max: number, fallback: number) {
  return z.preprocess(
    (value) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value),
    z.number({ error: 'must be a whole number in decimal digits' }).int().min(min).max(max).default(fallback),
  );
}

/**
 * Query of a cursor-paginated list: limit (default and maximum per endpoint) and an opaque cursor. A
 * cursor carries the id of the row a page ended at, in the form the list's ids take (uuids unless said).
 */
export function cursorQuery(defaultLimit: number, maxLimit: number, idPattern: RegExp = UUID_PATTERN) {
  return {
    limit: queryInteger(1, maxLimit, defaultLimit),
    cursor: z
      .string()
      .optional()
      .transform((value, ctx) => {
        if (value === undefined) return undefined;
        const position = decodeCursor(value, idPattern);
        if (!position) ctx.addIssue({ code: 'custom', message: 'not a cursor this list handed out' });
        return position ?? z.NEVER;
      })
      .describe(
        'Opaque: the nextCursor of the previous page, as this list handed it out. Any other value is refused with 400 invalid_body.',
      ),
  };
}

/** The largest offset: PostgreSQL's and Prisma's 32-bit integers (a list that long is not paged by offset). */
const MAX_OFFSET = 2_147_483_647;

/** Query of an offset-paginated list (spec 4.1): limit default 50, max 200; offset from 0. */
export const offsetQuery = {
  limit: queryInteger(1, 200, 50),
  offset: queryInteger(0, MAX_OFFSET, 0),
};

/** The last page a page-paginated list serves: (page - 1) * limit stays an offset PostgreSQL and Prisma take. */
const MAX_PAGE = Math.floor(MAX_OFFSET / 200) + 1;

/** Query of a page-paginated list (spec 4.1, style 3: GET /commerce/orders): page from 1 (default 1), limit default 50, max 200. */
export const pageQuery = {
  page: queryInteger(1, MAX_PAGE, 1),
  limit: queryInteger(1, 200, 50),
};

/** Timestamps a cursor can carry: PostgreSQL's timestamp range is wider, JavaScript's narrower; this is the sane middle. */
const CURSOR_YEARS = { min: 1970, max: 9999 };

/** Where a page ends in a list ordered by (createdAt desc, id desc). */
export interface CursorPosition {
  createdAt: Date;
  id: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id])).toString('base64url');
}

function decodeCursor(cursor: string, idPattern: RegExp): CursorPosition | null {
  try {
    // Only what encodeCursor makes: [ISO time, uuid]. Anything else would reach the query and fail there.
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [unknown, unknown];
    if (typeof createdAt !== 'string' || typeof id !== 'string' || !idPattern.test(id)) return null;
    const date = new Date(createdAt);
    const year = date.getUTCFullYear();
    return year >= CURSOR_YEARS.min && year <= CURSOR_YEARS.max ? { createdAt: date, id } : null;
  } catch {
    return null;
  }
}

/** Prisma filter for the rows after a cursor, in (createdAt desc, id desc) order. */
export function afterCursor(position: CursorPosition | undefined) {
  if (!position) return {};
  return {
    OR: [{ createdAt: { lt: position.createdAt } }, { createdAt: position.createdAt, id: { lt: position.id } }],
  };
}

/** Fetches limit + 1 rows to tell whether another page follows. */
export function cursorPage<Row extends CursorPosition, Item>(rows: Row[], limit: number, view: (row: Row) => Item) {
  const page = rows.slice(0, limit);
  return { items: page.map(view), nextCursor: rows.length > limit ? encodeCursor(page.at(-1)!) : null };
}
