// `npm run bench:knowledge-search`: what one knowledge search of a call's turn costs (lib/knowledge/knowledge-store.ts
// searchAgentKnowledge, docs/features/knowledge-search.md), and what it follows: the passages that match, not the
// documents waiting. Two agents of one workspace on a durable embedded PostgreSQL:
// - small: BENCH_KNOWLEDGE_DOCS (20) documents of about 3,000 words (about 20 passages each);
// - large: ten times as many documents (the baseline of the same run).
// Their filler text is drawn from a vocabulary of 5,000 made-up words; each agent also has the same three "needle"
// documents. Queries, alternated between the agents, BENCH_KNOWLEDGE_QUERIES (400) of each:
// - rare: words only the needle passages hold: the same few passages match for both agents;
// - common: a needle word and a filler word about 1 passage in 10 holds: the matches grow with the documents.
// Each search goes through a pg pool as the API's runs (named statement). Per (agent, query): p50/p95 latency and,
// from EXPLAIN (ANALYZE, BUFFERS) of the statement, the passages matched and the shared buffers read.
// Writes bench/results/knowledge-search.json and .md.
import { randomUUID } from 'node:crypto';
import { startBenchPostgres } from './bench-postgres';
import { benchMachine, writeBenchResults } from './results-files';
import { searchAgentKnowledge, searchTextOf } from '../lib/knowledge/knowledge-store';
import { poolSql } from '../lib/run-sql';
import { createSqlPool } from '../lib/sql-pool';

const DOCS = Number(process.env.BENCH_KNOWLEDGE_DOCS ?? 20);
const QUERIES = Number(process.env.BENCH_KNOWLEDGE_QUERIES ?? 400);
const WORDS_PER_DOC = 3_000;

/** A deterministic generator, so that two runs search the same text. */
let seed = 42;
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;

const syllables = ['ka', 'lo', 'mi', 'ren', 'tu', 'sa', 'vor', 'pe', 'dan', 'qui', 'zel', 'bro'];
const vocabulary = Array.from({ length: 5_000 }, (_, index) => {
  let word = '';
  for (let rest = index + 1; rest > 0; rest = Math.floor(rest / syllables.length))
    word += syllables[rest % syllables.length];
  return `${word}x`;
});
// Zipf-like: word i drawn with weight 1/(i+1); word 100 is the "common" one (in about 1 passage in 10).
const weights = vocabulary.map((_, index) => 1 / (index + 1));
const total = weights.reduce((sum, weight) => sum + weight, 0);
const cumulative = weights.map(
  (
    (sum) => (weight: number) =>
      (sum += weight / total)
  )(0),
);
const drawWord = () => {
  const target = random();
  let low = 0;
  let high = cumulative.length - 1;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (cumulative[middle]! < target) low = middle + 1;
    else high = middle;
  }
  return vocabulary[low]!;
};
const fillerDocument = () => {
  const paragraphs: string[] = [];
  for (let written = 0; written < WORDS_PER_DOC;) {
    const length = 60 + Math.floor(random() * 80);
    paragraphs.push(`${Array.from({ length }, drawWord).join(' ')}.`);
    written += length;
  }
  return paragraphs.join('\n\n');
};
const NEEDLES = [
  'Our warranty covers a broken heel or sole for two years after purchase.',
  'A warranty claim needs the order number and a photo of the broken part.',
  'Heels replaced under warranty are sent back within ten days.',
];

const postgres = await startBenchPostgres('bench-knowledge-');
const pool = createSqlPool(postgres.url, 4);
const sql = poolSql(pool);
try {
  const [workspace] = await sql<{ id: string }>(
    `INSERT INTO "Workspace" (id, name) VALUES ($1, 'bench') RETURNING id`,
    randomUUID(),
  );
  const [base] = await sql<{ id: string }>(
    `INSERT INTO "KnowledgeBase" (id, "workspaceId", name, "updatedAt") VALUES ($1, $2, 'bench', now()) RETURNING id`,
    randomUUID(),
    workspace!.id,
  );
  const newAgent = async (name: string) =>
    (
      await sql<{ id: string }>(
        `INSERT INTO "Agent" (id, "workspaceId", name, language, "voiceId", script, "updatedAt")
         VALUES ($1, $2, $3, 'en-US', 'espeak-ng/en-us', '{"openingLine":"Hi","questions":[],"closing":"Bye"}', now()) RETURNING id`,
        randomUUID(),
        workspace!.id,
        name,
      )
    )[0]!.id;
  const addDocuments = async (agentId: string, contents: string[]) => {
    for (let start = 0; start < contents.length; start += 20) {
      const batch = contents.slice(start, start + 20);
      const ids = batch.map(() => randomUUID());
      await sql(
        `INSERT INTO "KnowledgeDocument" (id, "workspaceId", "knowledgeBaseId", title, format, content, "charCount", "updatedAt")
         SELECT id, $2, $3, 'Document ' || ord, 'text', content, length(content), now()
           FROM unnest($1::uuid[], $4::text[]) WITH ORDINALITY AS d(id, content, ord)`,
        ids,
        workspace!.id,
        base!.id,
        batch,
      );
      await sql(`INSERT INTO "AgentDocument" ("agentId", "documentId") SELECT $1, unnest($2::uuid[])`, agentId, ids);
    }
  };
  const agents = { small: await newAgent('small'), large: await newAgent('large') };
  const loadStarted = performance.now();
  for (const [name, count] of [
    ['small', DOCS],
    ['large', DOCS * 10],
  ] as const)
    await addDocuments(agents[name], [...NEEDLES, ...Array.from({ length: count - NEEDLES.length }, fillerDocument)]);
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  await sql('VACUUM ANALYZE "KnowledgePassage"');
  await sql('VACUUM ANALYZE "AgentDocument"');
  const [sizes] = await sql<{ passages: number; documents: number; indexBytes: string }>(
    `SELECT (SELECT count(*)::int FROM "KnowledgePassage") AS passages, (SELECT count(*)::int FROM "KnowledgeDocument") AS documents,
            pg_size_pretty(pg_indexes_size('"KnowledgePassage"')) AS "indexBytes"`,
  );
  const passagesOf = async (agentId: string) =>
    (
      await sql<{ count: number }>(
        `SELECT count(*)::int FROM "KnowledgePassage" p JOIN "AgentDocument" ad ON ad."documentId" = p."documentId" WHERE ad."agentId" = $1`,
        agentId,
      )
    )[0]!.count;

  const common = vocabulary[100]!;
  const queries = { rare: 'is the warranty good for a broken heel?', common: `warranty ${common}` };
  type Key = `${keyof typeof agents}/${keyof typeof queries}`;
  const samples = new Map<Key, number[]>();
  // Warm up (plans cached per connection, pages in memory), then alternate.
  for (let round = 0; round < 20; round++)
    for (const agentId of Object.values(agents))
      for (const query of Object.values(queries))
        await searchAgentKnowledge(sql, { agentId, query, language: 'en-US', limit: 3 });
  for (let round = 0; round < QUERIES; round++)
    for (const [agentName, agentId] of Object.entries(agents))
      for (const [queryName, query] of Object.entries(queries)) {
        const started = performance.now();
        await searchAgentKnowledge(sql, { agentId, query, language: 'en-US', limit: 3 });
        const key = `${agentName}/${queryName}` as Key;
        samples.set(key, [...(samples.get(key) ?? []), performance.now() - started]);
      }
  const percentile = (values: number[], share: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    return Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]!.toFixed(3));
  };
  const rows = [];
  for (const [agentName, agentId] of Object.entries(agents))
    for (const [queryName, query] of Object.entries(queries)) {
      const [plan] = await sql<{ 'QUERY PLAN': unknown }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
         SELECT p."documentId" FROM websearch_to_tsquery('english'::regconfig, $2) AS q, "KnowledgePassage" p
           JOIN "AgentDocument" ad ON ad."documentId" = p."documentId" AND ad."agentId" = $1::uuid
          WHERE p."searchEnglish" @@ q`,
        agentId,
        searchTextOf(query),
      );
      const top = (plan!['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan;
      const nodes: Array<Record<string, unknown>> = [];
      const walk = (node: Record<string, unknown>) => {
        nodes.push(node);
        for (const child of (node.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
      };
      walk(top);
      const gin = nodes.find((node) => node['Index Name'] === 'KnowledgePassage_searchEnglish_idx');
      const times = samples.get(`${agentName}/${queryName}` as Key)!;
      rows.push({
        agent: agentName,
        query: queryName,
        agentPassages: await passagesOf(agentId),
        matchedInIndex: gin ? Number(gin['Actual Rows']) : null,
        matchedForAgent: Number(top['Actual Rows']),
        sharedBuffers: Number(top['Shared Hit Blocks'] ?? 0) + Number(top['Shared Read Blocks'] ?? 0),
        usesGinIndex: gin !== undefined,
        p50Ms: percentile(times, 0.5),
        p95Ms: percentile(times, 0.95),
      });
    }
  const result = {
    machine: benchMachine(),
    documents: sizes,
    loadSeconds: Number(loadSeconds.toFixed(1)),
    queries,
    rows,
  };
  console.log(JSON.stringify(result, null, 2));
  writeBenchResults('knowledge-search', result, [
    '# Knowledge search: one search per turn',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run bench:knowledge-search\` (${benchMachine().cpus} CPUs, Node ${process.version}), embedded PostgreSQL 15, durable.`,
    `${sizes!.documents} documents, ${sizes!.passages} passages (indexes of the passage table: ${sizes!.indexBytes}; loading them with their passages took ${result.loadSeconds} s). ${QUERIES} searches of each kind, alternated, limit 3.`,
    '',
    '| agent | query | agent passages | matched (index) | matched (agent) | buffers | GIN index | p50 ms | p95 ms |',
    '|-|-|-|-|-|-|-|-|-|',
    ...rows.map(
      (row) =>
        `| ${row.agent} | ${row.query} | ${row.agentPassages} | ${String(row.matchedInIndex)} | ${String(row.matchedForAgent)} | ${row.sharedBuffers} | ${row.usesGinIndex ? 'yes' : 'no'} | ${row.p50Ms} | ${row.p95Ms} |`,
    ),
    '',
    `Queries: rare "${queries.rare}"; common "${queries.common}" (\`${common}\` is a filler word about 1 passage in 10 holds).`,
    '',
  ]);
} finally {
  await pool.end();
  await postgres.stop();
}
