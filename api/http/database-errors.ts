const CONNECTIVITY_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  'EHOSTUNREACH',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
  'P1001',
  'P1002',
  'P1017',
]);

/** True when a failure means PostgreSQL could not be reached, not that a query was wrong. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error as Record<string, unknown> | undefined, depth = 0; current && depth < 6; depth++) {
    const code = (current.code ?? (current as { kind?: string }).kind) as string | undefined;
    if (code && CONNECTIVITY_CODES.has(code)) return true;
    const message = typeof current.message === 'string' ? current.message : '';
    if (
      /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|Can't reach database/i.test(
        message,
      )
    )
      return true;
    current = (current.cause ?? (current as { originalError?: unknown }).originalError) as
      Record<string, unknown> | undefined;
  }
  return false;
}
