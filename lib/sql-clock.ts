/*
 * The database's clock, as SQL text to put in a statement: every timestamp column of the schema is `timestamp without
 * time zone` holding UTC, so "now" must be written the same way everywhere a statement compares or stores it.
 */

/** Now, as the UTC wall-clock time the columns (timestamp without time zone) hold. */
export const NOW_UTC = `(now() AT TIME ZONE 'UTC')`;
