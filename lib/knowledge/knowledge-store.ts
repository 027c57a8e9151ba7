import type { KnowledgePassage } from '../conversation/engine';
import type { RunSql } from '../run-sql';

/**
 * Knowledge search during a call (docs/features/knowledge-search.md): the passages of the agent's linked documents
 * that best answer what the lead said, by PostgreSQL full-text search. The passages and their vectors are written by
 * the database with their document (trigger "KnowledgeDocument_passages", migration knowledge_passages_compliance);
 * this module only reads them, in one statement per turn, and none for an agent without documents (conversationKnowledge).
 */

/** The text search configurations the passages are indexed under, by a language tag's primary subtag. */
export const SEARCH_CONFIGURATIONS = {
  en: 'english',
  es: 'spanish',
  fr: 'french',
  de: 'german',
} as const;

export type SearchConfiguration = (typeof SEARCH_CONFIGURATIONS)[keyof typeof SEARCH_CONFIGURATIONS] | 'simple';

/** Each configuration's vector column of "KnowledgePassage", each with its GIN index. */
const VECTOR_COLUMNS: Record<SearchConfiguration, string> = {
  english: 'searchEnglish',
  spanish: 'searchSpanish',
  french: 'searchFrench',
  german: 'searchGerman',
  simple: 'searchSimple',
};

/** Passages a search answers at most, whatever is asked. */
export const MAX_PASSAGES = 10;

/** Words of an utterance searched for at most (a long prompt's first ones). */
export const MAX_QUERY_WORDS = 32;

/**
 * The configuration of an agent's language (a BCP 47 tag): its primary subtag's stemmer and stop words, or `simple`
 * (words lower-cased, nothing stemmed, no stop word) for a language no configuration is indexed for.
 */
export function searchConfigurationOf(language: string): SearchConfiguration {
  const primary = language.trim().toLowerCase().split(/[-_]/)[0] ?? '';
  return (SEARCH_CONFIGURATIONS as Record<string, SearchConfiguration>)[primary] ?? 'simple';
}

/**
 * What the lead said as a websearch_to_tsquery text: its words joined by `or`, so that a passage matching any of
 * them is found and ts_rank_cd puts first those matching most, closest together. A spoken question is no search
 * box: "um, do you ship to Canada?" must find the shipping passage, which an AND of every word (plainto_tsquery)
 * would not. Punctuation, quotes and minus signs are dropped (no phrase or negation syntax reaches the parser); the
 * stop words of the configuration drop out in the parser. Empty: nothing to search.
 */
export function searchTextOf(utterance: string): string {
  const words = (utterance.match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => word.toLowerCase() !== 'or');
  return words.slice(0, MAX_QUERY_WORDS).join(' or ');
}

const statementOf = (configuration: SearchConfiguration) => {
  const vector = `p."${VECTOR_COLUMNS[configuration]}"`;
  return {
    name: `knowledge_search_${configuration}`,
    text: `SELECT p."documentId"::text AS "documentId", d.title, p.text
             FROM websearch_to_tsquery('${configuration}'::regconfig, $2) AS q,
                  "KnowledgePassage" p
                  JOIN "AgentDocument" ad ON ad."documentId" = p."documentId" AND ad."agentId" = $1::uuid
                  JOIN "KnowledgeDocument" d ON d.id = p."documentId"
            WHERE ${vector} @@ q
            ORDER BY ts_rank_cd(${vector}, q) DESC, p."documentId", p.ordinal
            LIMIT $3`,
  };
};

const STATEMENTS = Object.fromEntries(
  (Object.keys(VECTOR_COLUMNS) as SearchConfiguration[]).map((configuration) => [
    configuration,
    statementOf(configuration),
  ]),
) as Record<SearchConfiguration, { name: string; text: string }>;

export interface KnowledgeSearch {
  agentId: string;
  /** What the lead said. */
  query: string;
  /** The agent's language (BCP 47): picks the text search configuration. */
  language: string;
  /** Passages answered at most (1 to MAX_PASSAGES; default 3). */
  limit?: number;
}

/**
 * The best passages of the agent's linked documents for what the lead said, best first (ts_rank_cd; ties in document
 * and passage order): one statement, the GIN index of the language's vector finding the passages that hold a word
 * said, joined to the agent's links. Empty when nothing matches, the agent has no document, or nothing was said.
 */
export async function searchAgentKnowledge(sql: RunSql, search: KnowledgeSearch): Promise<KnowledgePassage[]> {
  const text = searchTextOf(search.query);
  if (!text) return [];
  const limit = Math.min(Math.max(Math.trunc(search.limit ?? 3), 1), MAX_PASSAGES);
  return sql<KnowledgePassage>(STATEMENTS[searchConfigurationOf(search.language)], search.agentId, text, limit);
}

/** Whether any document the agent uses has a passage: the one question an agent without documents costs a conversation. */
const HAS_PASSAGES = {
  name: 'knowledge_agent_has_passages',
  text: `SELECT EXISTS (
           SELECT 1 FROM "AgentDocument" ad JOIN "KnowledgePassage" p ON p."documentId" = ad."documentId"
            WHERE ad."agentId" = $1::uuid) AS "hasPassages"`,
};

/**
 * The knowledge search of one conversation (`DialogueContext.knowledge`, docs/features/knowledge-search.md#during-a-conversation):
 * whether the agent has any passage is asked once, at the conversation's first search; an agent without (or no agent)
 * then costs no query at all for the rest of it. A document linked during the conversation is searched from the next
 * one. A failed question is asked again at the next search.
 */
export function conversationKnowledge(
  sql: RunSql,
  agent: { id: string; language: string } | null,
): (query: string) => Promise<KnowledgePassage[]> {
  let hasPassages: Promise<boolean> | undefined;
  const asked = (agentId: string) =>
    (hasPassages ??= sql<{ hasPassages: boolean }>(HAS_PASSAGES, agentId).then(
      ([row]) => row?.hasPassages ?? false,
      (error: unknown) => {
        hasPassages = undefined;
        throw error;
      },
    ));
  return async (query) => {
    if (!agent || !searchTextOf(query) || !(await asked(agent.id))) return [];
    return searchAgentKnowledge(sql, { agentId: agent.id, query, language: agent.language });
  };
}
