/** A UUID in its canonical text form (any version, either case): what a uuid column accepts. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `id` can be looked up in a uuid column: anything else would make PostgreSQL refuse the query. */
export function isUuid(id: string): boolean {
  return UUID_PATTERN.test(id);
}
