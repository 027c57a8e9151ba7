import pg from 'pg';

/** One statement on a connection of its own: CREATE/DROP DATABASE cannot run inside a pool's transaction. */
export async function runStatement<Row extends pg.QueryResultRow = pg.QueryResultRow>(
  databaseUrl: string,
  statement: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<Row>(statement, values)).rows;
  } finally {
    await client.end();
  }
}
