import type { Queryable } from '../sql-pool';

/**
 * The pace of Google writes per service account, shared by every worker through PostgreSQL (SheetQuotaBucket): a
 * token bucket refilled at `writesPerMinute` and holding at most `burst`. Each write reserves a token in one statement
 * (the bucket may go below zero: the reservation is then in the future) and waits until its turn, so any window of
 * T seconds holds at most burst + writesPerMinute × T / 60 writes, whichever worker makes them. With 54 a minute and a
 * burst of 5 that is at most 59 in any minute, under Google's 60 write requests per minute per user per project.
 */
export interface WritePace {
  writesPerMinute: number;
  burst: number;
}

export const DEFAULT_WRITE_PACE: WritePace = { writesPerMinute: 54, burst: 5 };

export interface SheetWriteLimiter {
  /** Reserves the account's next write and answers how long to wait for it, in ms (0: now). */
  reserve(account: string): Promise<number>;
}

export function sheetWriteLimiter(sql: Queryable, pace: WritePace): SheetWriteLimiter {
  return {
    async reserve(account) {
      const {
        rows: [row],
      } = await sql.query<{ tokens: number }>(
        `INSERT INTO "SheetQuotaBucket" (account, tokens, "updatedAt") VALUES ($1, $2::float8 - 1, clock_timestamp())
         ON CONFLICT (account) DO UPDATE SET
           tokens = least($2::float8, "SheetQuotaBucket".tokens
             + extract(epoch FROM clock_timestamp() - "SheetQuotaBucket"."updatedAt") * $3::float8 / 60) - 1,
           "updatedAt" = clock_timestamp()
         RETURNING tokens`,
        [account, pace.burst, pace.writesPerMinute],
      );
      const tokens = Number(row!.tokens);
      return tokens >= 0 ? 0 : Math.ceil((-tokens * 60_000) / pace.writesPerMinute);
    },
  };
}
