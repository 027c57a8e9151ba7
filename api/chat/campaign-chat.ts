import { ErrorCode } from '../../lib/error-codes';
import { createBuiltinAnalyst } from '../../lib/chat/builtin-analyst';
import { ChatProviderError, type ChatProvider, type ChatTurn } from '../../lib/chat/provider';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import { campaignFactSource } from '../campaign-data/campaign-facts';
import { findOwnedCampaign } from '../campaigns/campaigns';
import type { AppServices } from '../app-services';
import { log } from '../../lib/log';

/** Questions one campaign conversation holds when the workspace sets no cap of its own (Workspace.chatMessageCap). */
export const DEFAULT_CHAT_MESSAGE_CAP = 100;
/** The latest messages of the conversation given as context with a question (the oldest beyond it are left out). */
export const CHAT_CONTEXT_MESSAGES = 20;

/** One line of the answer (application/x-ndjson). */
export type ChatEvent =
  { type: 'delta'; text: string } | { type: 'done'; text: string } | { type: 'error'; message: string };

const builtinAnalyst = createBuiltinAnalyst();
const providerOf = (services: AppServices): ChatProvider => services.chat ?? builtinAnalyst;

/**
 * Takes the question into the campaign's conversation, under its cap: the questions of one conversation
 * take turns (an advisory lock on the campaign), so two at once never both pass the last place. Over the
 * cap (Campaign.chatQuestionsAsked, which DELETE does not reset): 429 message_limit_reached, nothing stored. Answers the conversation before the question.
 */
async function acceptQuestion(
  { sql }: AppServices,
  principal: Principal,
  campaignId: string,
  question: string,
): Promise<{ history: ChatTurn[]; questionId: string }> {
  const client = await sql.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('campaign-chat:' || $1, 0))`, [campaignId]);
    const {
      rows: [count],
    } = await client.query<{ questions: number; cap: number }>(
      `SELECT (SELECT "chatQuestionsAsked" FROM "Campaign" WHERE id = $1::uuid) AS questions,
              (SELECT coalesce("chatMessageCap", $3::int) FROM "Workspace" WHERE id = $2::uuid) AS cap`,
      [campaignId, principal.workspaceId, DEFAULT_CHAT_MESSAGE_CAP],
    );
    // What was asked, not what the conversation still holds: clearing it gives no question back (each was paid for).
    if (count!.questions >= count!.cap)
      throw new Refusal(ErrorCode.message_limit_reached, {
        detail: `this campaign's chat has been asked its cap of ${count!.cap} questions; clearing the conversation does not reset it`,
      });
    await client.query(`UPDATE "Campaign" SET "chatQuestionsAsked" = "chatQuestionsAsked" + 1 WHERE id = $1::uuid`, [
      campaignId,
    ]);
    const { rows } = await client.query<ChatTurn>(
      `SELECT role, content FROM (
         SELECT role, content, "createdAt", id FROM "CampaignChatMessage" WHERE "campaignId" = $1::uuid
          ORDER BY "createdAt" DESC, id DESC LIMIT $2) latest
        ORDER BY "createdAt", id`,
      [campaignId, CHAT_CONTEXT_MESSAGES],
    );
    const {
      rows: [stored],
    } = await client.query<{ id: string }>(
      `INSERT INTO "CampaignChatMessage" (id, "workspaceId", "campaignId", role, content, "apiKeyId")
       VALUES (gen_random_uuid(), $1::uuid, $2::uuid, 'user', $3, $4::uuid) RETURNING id`,
      [principal.workspaceId, campaignId, question, principal.keyId],
    );
    await client.query('COMMIT');
    return { history: rows, questionId: stored!.id };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** What the client is told when the provider fails after the answer began: never a secret, never a stack. */
const failureMessage = (error: unknown) =>
  error instanceof ChatProviderError ? error.message : 'the answer failed unexpectedly';

/**
 * The answer as events: each fragment as the provider makes it, then the whole text once it is stored.
 * A client that disconnects (signal) stops the provider and nothing of the answer is kept; a provider
 * failure ends with an error event and nothing of the answer is kept either. The question stays, counted.
 */
async function* answerEvents(
  services: AppServices,
  provider: ChatProvider,
  stored: { workspaceId: string; campaignId: string; questionId: string },
  question: Parameters<ChatProvider['answer']>[0],
): AsyncGenerator<ChatEvent> {
  let text = '';
  try {
    for await (const fragment of provider.answer(question)) {
      if (question.signal.aborted) return;
      text += fragment;
      yield { type: 'delta', text: fragment };
    }
  } catch (error) {
    if (question.signal.aborted) return;
    if (!(error instanceof ChatProviderError)) log.error({ err: error }, 'the chat answer failed');
    yield { type: 'error', message: failureMessage(error) };
    return;
  }
  if (question.signal.aborted) return;
  // Only beside its question: a conversation cleared while the answer streamed does not get it back.
  await services.sql.query(
    `INSERT INTO "CampaignChatMessage" (id, "workspaceId", "campaignId", role, content, provider)
     SELECT gen_random_uuid(), $1::uuid, $2::uuid, 'assistant', $3, $4
      WHERE EXISTS (SELECT 1 FROM "CampaignChatMessage" WHERE id = $5::uuid)`,
    [stored.workspaceId, stored.campaignId, text, provider.name, stored.questionId],
  );
  yield { type: 'done', text };
}

/**
 * POST /campaigns/{id}/chat/stream: checks the campaign and the cap and stores the question (errors here are
 * ordinary JSON answers: nothing is sent yet), then hands back the answer's events to be streamed.
 */
export async function askCampaign(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  message: string,
  signal: AbortSignal,
): Promise<AsyncIterable<ChatEvent>> {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const { history, questionId } = await acceptQuestion(services, principal, campaign.id, message);
  return answerEvents(
    services,
    providerOf(services),
    { workspaceId: principal.workspaceId, campaignId: campaign.id, questionId },
    { question: message, history, facts: campaignFactSource(services, principal, campaign), signal },
  );
}

/** DELETE /campaigns/{id}/chat/messages: the conversation is emptied; the questions asked stay counted against the cap. */
export async function clearCampaignChat(services: AppServices, principal: Principal, campaignId: string) {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const { rowCount } = await services.sql.query(`DELETE FROM "CampaignChatMessage" WHERE "campaignId" = $1::uuid`, [
    campaign.id,
  ]);
  return { deleted: rowCount ?? 0 };
}
