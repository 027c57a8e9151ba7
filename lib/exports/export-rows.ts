import { SIMULATED_PROVIDER } from '../simulators';
import type { Queryable } from '../sql-pool';

/**
 * The columns of a calls export, in their default order. The call intelligence (docs/features/call-intelligence.md) is
 * `evaluationScore` and `extractedFields`, the agent's extraction fields as filled from the transcript ({ name: value }
 * as JSON); `leadFields` is the JSON the lead was pushed with; `simulated` is `true` for a call the simulated carrier
 * placed (docs/configuration.md#simulators), else `false`.
 */
export const EXPORT_COLUMNS = [
  'callId',
  'leadId',
  'phone',
  'leadName',
  'attempt',
  'status',
  'outcome',
  'durationMs',
  'startedAt',
  'endedAt',
  'provider',
  'simulated',
  'leadFields',
  'evaluationScore',
  'extractedFields',
] as const;

export type ExportColumn = (typeof EXPORT_COLUMNS)[number];
export type ExportCell = string | number | null;
export type ExportRow = Record<ExportColumn, ExportCell>;

/** Which calls an export covers: startedAt in [from, until), both ISO 8601 instants. */
export interface ExportScope {
  campaignId: string;
  from: string | null;
  until: string;
}

/** What an export job was asked for, as stored in ExportJob.options. */
export interface ExportOptions {
  columns: ExportColumn[];
  from: string | null;
  until: string;
}

/** Where a keyset page ends: the (startedAt, id) of its last call. */
export interface ExportCursor {
  startedAt: string;
  callId: string;
}

// Instants travel as text and are read in UTC: Call.startedAt is a timestamp without time zone holding UTC.
const instant = (parameter: string) => `(${parameter}::timestamptz AT TIME ZONE 'UTC')`;
const iso = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The calls of a scope, after a cursor if there is one: the WHERE clause and its $n values. */
function scopeFilter(scope: ExportScope, after: ExportCursor | null = null): { where: string; values: unknown[] } {
  const values: unknown[] = [];
  const parameter = (value: unknown) => `$${values.push(value)}`;
  const conditions = [
    `c."campaignId" = ${parameter(scope.campaignId)}::uuid`,
    `c."startedAt" < ${instant(parameter(scope.until))}`,
  ];
  if (scope.from) conditions.push(`c."startedAt" >= ${instant(parameter(scope.from))}`);
  if (after)
    conditions.push(
      `(c."startedAt", c.id) > (${instant(parameter(after.startedAt))}, ${parameter(after.callId)}::uuid)`,
    );
  return { where: conditions.join(' AND '), values };
}

export async function countExportRows(sql: Queryable, scope: ExportScope): Promise<number> {
  const { where, values } = scopeFilter(scope);
  const {
    rows: [row],
  } = await sql.query<{ rows: number }>(`SELECT count(*)::int AS rows FROM "Call" c WHERE ${where}`, values);
  return row?.rows ?? 0;
}

/**
 * One keyset page in (startedAt, id) order, read through the index Call(campaignId, startedAt, id):
 * each page costs the same however deep into the campaign it starts, and no page holds more than
 * `limit` rows in memory. Instants, the lead's fields and the extracted fields come out as text, ready to write;
 * a call without intelligence has null in its intelligence columns.
 */
export async function readExportPage(
  sql: Queryable,
  scope: ExportScope,
  after: ExportCursor | null,
  limit: number,
): Promise<ExportRow[]> {
  const { where, values } = scopeFilter(scope, after);
  const { rows } = await sql.query<ExportRow>(
    `
    SELECT c.id::text AS "callId", c."leadId"::text AS "leadId", l.phone, l.name AS "leadName", c.attempt, c.status, c.outcome,
      c."durationMs", ${iso('c."startedAt"')} AS "startedAt", ${iso('c."endedAt"')} AS "endedAt", c.provider,
      (c.provider = '${SIMULATED_PROVIDER}')::text AS simulated, l.fields::text AS "leadFields", (c.intelligence #>> '{evaluation,score}')::int AS "evaluationScore",
      (SELECT jsonb_object_agg(field.key, field.value -> 'value') FROM jsonb_each(c.intelligence -> 'extraction') field)::text
        AS "extractedFields"
    FROM "Call" c JOIN "Lead" l ON l.id = c."leadId"
    WHERE ${where}
    ORDER BY c."startedAt", c.id
    LIMIT $${values.length + 1}`,
    [...values, limit],
  );
  return rows;
}

export function cursorAfter(rows: ExportRow[]): ExportCursor | null {
  const last = rows.at(-1);
  return last ? { startedAt: last.startedAt as string, callId: last.callId as string } : null;
}

/** Every page of a scope, for exports small enough to be answered inline. */
export async function* exportPages(sql: Queryable, scope: ExportScope, pageRows: number): AsyncGenerator<ExportRow[]> {
  let after: ExportCursor | null = null;
  for (;;) {
    const rows = await readExportPage(sql, scope, after, pageRows);
    if (rows.length) yield rows;
    if (rows.length < pageRows) return;
    after = cursorAfter(rows);
  }
}
