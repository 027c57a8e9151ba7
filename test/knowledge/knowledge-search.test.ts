// Knowledge search during a call (docs/features/knowledge-search.md): the passages the database writes with each
// document, and searchAgentKnowledge over the agent's linked documents, on a real PostgreSQL.
import { describe, expect, it } from 'vitest';
import {
  conversationKnowledge,
  searchAgentKnowledge,
  searchConfigurationOf,
  searchTextOf,
} from '../../lib/knowledge/knowledge-store';
import type { RunSql, SqlStatement } from '../../lib/run-sql';
import { insertAgent } from '../support/agents';
import { useTestDatabase } from '../support/database';
import { createTestWorkspace } from '../support/workspace';

const { db } = await useTestDatabase();
const workspace = await createTestWorkspace(db, { scopes: ['chatbots.view'] });
const base = await db.knowledgeBase.create({ data: { workspaceId: workspace.workspaceId, name: 'Shop' } });

const words = (count: number, word = 'lorem') => Array.from({ length: count }, () => word).join(' ');

async function addDocument(title: string, content: string) {
  return db.knowledgeDocument.create({
    data: {
      workspaceId: workspace.workspaceId,
      knowledgeBaseId: base.id,
      title,
      format: 'markdown',
      content,
      charCount: content.length,
    },
  });
}

async function passagesOf(documentId: string) {
  return db.knowledgePassage.findMany({ where: { documentId }, orderBy: { ordinal: 'asc' } });
}

async function agentUsing(documentIds: string[], language = 'en-US') {
  const agent = await insertAgent(db, workspace.workspaceId, { language });
  await db.agentDocument.createMany({ data: documentIds.map((documentId) => ({ agentId: agent.id, documentId })) });
  return agent;
}

const SHIPPING = [
  '# Shipping',
  'We ship to the United States, Canada and Mexico. Orders leave our warehouse within two business days.',
  'Express delivery costs 15 dollars and arrives the next day.',
].join('\n\n');
const RETURNS = [
  '# Returns',
  'You can return shoes within 30 days for a full refund, if they were not worn outside.',
  'Refunds are paid to the card used for the order within five days.',
].join('\n\n');
const CARE = 'Clean leather shoes with a soft brush. Never put them in the washing machine.';

const shipping = await addDocument('Shipping', SHIPPING);
const returns = await addDocument('Returns', RETURNS);
const care = await addDocument('Shoe care', CARE);

describe('passages', () => {
  it('are written with the document: small paragraphs packed together, in order, whitespace collapsed', async () => {
    const passages = await passagesOf(shipping.id);
    expect(passages.map((passage) => passage.text)).toEqual([SHIPPING]);
    const spaced = await addDocument('Spaced', 'One   line\nand the next.\n\n\n\n  Second\tparagraph.  ');
    expect((await passagesOf(spaced.id)).map((passage) => passage.text)).toEqual([
      'One line and the next.\n\nSecond paragraph.',
    ]);
  });

  it('hold 100 to 200 words: a passage closes at 100 words, a long paragraph is cut at its sentences, a long sentence in slices of 150 words', async () => {
    const sentence = (count: number) => `${words(count - 1)} end.`;
    const content = [
      words(60, 'alpha'),
      words(60, 'beta'), // 120 words with alpha: the passage closes
      words(30, 'gamma'),
      // 250 words in five sentences of 50: cut at its sentences, packed after gamma's 30 (130), then 100
      Array.from({ length: 5 }, () => sentence(50)).join(' '),
      // a sentence of 450 words: slices of 150, the first packed with the last sentence above (200)
      words(450, 'delta'),
    ].join('\n\n');
    const document = await addDocument('Long', content);
    const passages = await passagesOf(document.id);
    const counts = passages.map((passage) => passage.text.split(/\s+/).length);
    expect(counts).toEqual([120, 130, 100, 200, 150, 150]);
    expect(passages.map((passage) => passage.ordinal)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(passages[0]!.text).toBe(`${words(60, 'alpha')}\n\n${words(60, 'beta')}`);
    expect(passages[1]!.text.startsWith(`${words(30, 'gamma')}\n\n`)).toBe(true);
    expect(passages.flatMap((passage) => passage.text.split(/\s+/)).length).toBe(content.split(/\s+/).length);
  });

  it('go with their document, and follow an update of its content', async () => {
    const document = await addDocument('Temporary', 'Gift cards never expire.');
    expect(await passagesOf(document.id)).toHaveLength(1);
    await db.knowledgeDocument.update({ where: { id: document.id }, data: { content: 'Gift cards expire.' } });
    expect((await passagesOf(document.id)).map((passage) => passage.text)).toEqual(['Gift cards expire.']);
    await db.knowledgeDocument.delete({ where: { id: document.id } });
    expect(await passagesOf(document.id)).toEqual([]);
  });
});

describe('searchAgentKnowledge', () => {
  it("answers the best passages of the agent's linked documents, for a spoken question", async () => {
    const agent = await agentUsing([shipping.id, returns.id]);
    const found = await searchAgentKnowledge(db.sql, {
      agentId: agent.id,
      query: 'Um, do you guys ship to Canada?',
      language: 'en-US',
      limit: 3,
    });
    expect(found).toEqual([{ documentId: shipping.id, title: 'Shipping', text: SHIPPING }]);
    // Stemmed under English: "refunded" finds "refund"/"Refunds"; the title counts ("returns").
    const refund = await searchAgentKnowledge(db.sql, {
      agentId: agent.id,
      query: 'can I get my money refunded if I return them',
      language: 'en-GB',
    });
    expect(refund.map((passage) => passage.documentId)).toEqual([returns.id]);
  });

  it("never answers a document the agent does not use, nor another agent's", async () => {
    const agent = await agentUsing([returns.id]);
    const other = await agentUsing([]);
    const ask = (agentId: string) =>
      searchAgentKnowledge(db.sql, { agentId, query: 'how do I clean leather shoes', language: 'en' });
    expect((await ask(agent.id)).map((passage) => passage.documentId)).toEqual([returns.id]); // "shoes"
    expect(await ask(other.id)).toEqual([]);
    await db.agentDocument.create({ data: { agentId: other.id, documentId: care.id } });
    expect((await ask(other.id)).map((passage) => passage.title)).toEqual(['Shoe care']);
  });

  it('ranks the passages matching most words first, and answers at most limit', async () => {
    const agent = await agentUsing([shipping.id, returns.id, care.id]);
    const found = await searchAgentKnowledge(db.sql, {
      agentId: agent.id,
      query: 'shoes refund card days',
      language: 'en-US',
      limit: 2,
    });
    expect(found).toHaveLength(2);
    expect(found[0]!.title).toBe('Returns'); // shoes, refund, card, days: the most words said
  });

  it("searches under the agent's language: Spanish stems, and simple for a language without a configuration", async () => {
    const envios = await addDocument('Envíos', 'Hacemos envíos a toda España en 48 horas.');
    const spanish = await agentUsing([envios.id], 'es-MX');
    const found = await searchAgentKnowledge(db.sql, {
      agentId: spanish.id,
      query: '¿Cuánto tarda el envío?',
      language: 'es-MX',
    });
    expect(found.map((passage) => passage.title)).toEqual(['Envíos']);
    const japanese = await agentUsing([envios.id], 'ja-JP');
    const exact = (query: string) => searchAgentKnowledge(db.sql, { agentId: japanese.id, query, language: 'ja-JP' });
    expect(await exact('envío')).toEqual([]); // simple: no stemming, "envío" is not "envíos"
    expect((await exact('envíos')).map((passage) => passage.title)).toEqual(['Envíos']);
  });

  it('answers nothing for nothing said, stop words only, or search syntax', async () => {
    const agent = await agentUsing([shipping.id, returns.id]);
    for (const query of ['', '   ', '?!', 'is it the', '"" - or OR -'])
      expect(await searchAgentKnowledge(db.sql, { agentId: agent.id, query, language: 'en-US' })).toEqual([]);
    expect(searchTextOf('"ship" -to Canada, or Mexico?')).toBe('ship or to or Canada or Mexico');
    expect(searchConfigurationOf('es-419')).toBe('spanish');
    expect(searchConfigurationOf('pt-BR')).toBe('simple');
  });
});

describe("conversationKnowledge: one conversation's search", () => {
  /** db.sql, with the name of every statement it runs noted: the queries a conversation costs, counted. */
  function countingSql() {
    const statements: string[] = [];
    const sql: RunSql = <Row>(statement: SqlStatement, ...values: unknown[]) => {
      statements.push(typeof statement === 'string' ? statement : statement.name);
      return db.sql<Row>(statement, ...values);
    };
    const searches = () => statements.filter((name) => name.startsWith('knowledge_search_')).length;
    return { sql, statements, searches };
  }

  it('asks once whether an agent without documents has passages, then searches nothing for the rest of the conversation', async () => {
    const agent = await agentUsing([]);
    const counted = countingSql();
    const knowledge = conversationKnowledge(counted.sql, agent);
    for (const query of ['Do you ship to Canada?', 'Can I return shoes?', 'How do I clean leather shoes?'])
      expect(await knowledge(query)).toEqual([]);
    expect(counted.searches()).toBe(0);
    expect(counted.statements).toEqual(['knowledge_agent_has_passages']);
  });

  it('costs no query at all for nothing said, nor for a conversation without an agent', async () => {
    const agent = await agentUsing([shipping.id]);
    const counted = countingSql();
    expect(await conversationKnowledge(counted.sql, agent)(' ?! ')).toEqual([]);
    expect(await conversationKnowledge(counted.sql, null)('Do you ship to Canada?')).toEqual([]);
    expect(counted.statements).toEqual([]);
  });

  it('searches every utterance of an agent with documents, after the one question', async () => {
    const agent = await agentUsing([shipping.id, returns.id]);
    const counted = countingSql();
    const knowledge = conversationKnowledge(counted.sql, agent);
    expect(await knowledge('Um, do you guys ship to Canada?')).toEqual([
      { documentId: shipping.id, title: 'Shipping', text: SHIPPING },
    ]);
    expect((await knowledge('can I get my money refunded')).map((passage) => passage.title)).toEqual(['Returns']);
    expect(counted.searches()).toBe(2);
    expect(counted.statements.filter((name) => name === 'knowledge_agent_has_passages')).toHaveLength(1);
  });

  it('sees a document linked during the conversation from the next conversation on', async () => {
    const agent = await agentUsing([]);
    const knowledge = conversationKnowledge(db.sql, agent);
    expect(await knowledge('how do I clean leather shoes')).toEqual([]);
    await db.agentDocument.create({ data: { agentId: agent.id, documentId: care.id } });
    expect(await knowledge('how do I clean leather shoes')).toEqual([]);
    const next = conversationKnowledge(db.sql, agent);
    expect((await next('how do I clean leather shoes')).map((passage) => passage.title)).toEqual(['Shoe care']);
  });

  it('asks again at the next search when the question failed', async () => {
    const agent = await agentUsing([shipping.id]);
    let failures = 1;
    const flaky: RunSql = <Row>(statement: SqlStatement, ...values: unknown[]) =>
      failures-- > 0 ? Promise.reject(new Error('connection lost')) : db.sql<Row>(statement, ...values);
    const knowledge = conversationKnowledge(flaky, agent);
    await expect(knowledge('Do you ship to Canada?')).rejects.toThrow('connection lost');
    expect((await knowledge('Do you ship to Canada?')).map((passage) => passage.title)).toEqual(['Shipping']);
  });
});
