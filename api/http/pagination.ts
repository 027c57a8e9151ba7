import { z } from 'zod';

/** Query of a cursor-paginated list: limit (default and maximum per endpoint) and an opaque cursor. */
export function cursorQuery(defaultLimit: number, maxLimit: number) {
  return {
    limit: z.coerce.number().int().min(1).max(maxLimit).default(defaultLimit),
    cursor: z.string().optional().transform((value, ctx) => {
      if (value === undefined) return undefined;
      const position = decodeCursor(value);
      if (!position) ctx.addIssue({ code: 'custom', message: 'not a cursor this list handed out' });
      return position ?? z.NEVER;
    }),
  };
}

/** Query of an offset-paginated list (spec 4.1): limit default 50, max 200; offset from 0. */
export const offsetQuery = {
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
};

/** Where a page ends in a list ordered by (createdAt desc, id desc). */
export interface CursorPosition {
  createdAt: Date;
  id: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id])).toString('base64url');
}

function decodeCursor(cursor: string): CursorPosition | null {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [string, string];
    const date = new Date(createdAt);
    return typeof id === 'string' && !Number.isNaN(date.getTime()) ? { createdAt: date, id } : null;
  } catch {
    return null;
  }
}

/** Prisma filter for the rows after a cursor, in (createdAt desc, id desc) order. */
export function afterCursor(position: CursorPosition | undefined) {
  if (!position) return {};
  return { OR: [{ createdAt: { lt: position.createdAt } }, { createdAt: position.createdAt, id: { lt: position.id } }] };
}

/** Fetches limit + 1 rows to tell whether another page follows. */
export function cursorPage<Row extends CursorPosition, Item>(rows: Row[], limit: number, view: (row: Row) => Item) {
  const page = rows.slice(0, limit);
  return { items: page.map(view), nextCursor: rows.length > limit ? encodeCursor(page.at(-1)!) : null };
}
