import { MODEL_BOUNDS_DEFAULTS, modelFetch, windowOf, type HistoryWindow } from '../openai-client';
import { allFacts } from './campaign-facts';
import { ChatProviderError, type ChatProvider, type ChatQuestion } from './provider';

export const OPENAI_COMPATIBLE = 'openai-compatible';

export interface OpenAiCompatibleOptions {
  /** e.g. https://api.openai.com/v1: requests go to <baseUrl>/chat/completions. */
  baseUrl: string;
  model: string;
  /** Sent as a bearer token when set. Never logged, never put in an error. */
  apiKey?: string;
  /** The whole answer must arrive within this. */
  timeoutMs: number;
  /** `max_tokens` of each answer (MODEL_MAX_TOKENS_CHAT); default 1,000. */
  maxTokens?: number;
  /** The conversation's latest messages the model is sent (MODEL_HISTORY_*); default 40 messages, 24,000 characters. */
  history?: HistoryWindow;
}

const SYSTEM_PROMPT =
  "You are the analyst of one outbound calling campaign. Answer the user's questions only from the campaign facts " +
  "below (JSON computed from the campaign's data: kpis are its KPIs, rates are fractions 0..1 of dialed contacts; " +
  'timing counts calls per UTC hour and ISO weekday; outcomes counts calls per outcome; intelligence counts calls per ' +
  'extracted value of each field; orders are commerce orders attributed to the campaign). Never state a figure that ' +
  'is not in the facts or computed from them; when the facts cannot answer, say so plainly. Be concise.';

/** The JSON object of one server-sent event line `data: {...}`, or "done" for `data: [DONE]`; other lines: null. */
function eventOf(line: string): 'done' | { choices?: Array<{ delta?: { content?: string | null } }> } | null {
  if (!line.startsWith('data:')) return null;
  const data = line.slice(5).trim();
  if (data === '[DONE]') return 'done';
  try {
    return JSON.parse(data) as { choices?: Array<{ delta?: { content?: string | null } }> };
  } catch {
    throw new ChatProviderError('the chat model sent an event that is not JSON');
  }
}

/** Lines of a byte stream, split on newlines across chunk boundaries. */
async function* linesOf(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of body) {
    pending += decoder.decode(chunk, { stream: true });
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) yield line.replace(/\r$/, '');
  }
  if (pending) yield pending;
}

/**
 * A chat model behind any OpenAI-compatible chat completions endpoint (OpenAI, vLLM, llama.cpp's server,
 * Ollama...): POST /chat/completions with `stream: true`, read as server-sent events (`data: {...}` lines,
 * then `data: [DONE]`). The model is given the campaign's facts (the analyst's, by the same SQL) and the
 * conversation, so that its answers rest on the campaign's figures. Aborting the question closes the connection.
 */
export function createOpenAiCompatibleChat(options: OpenAiCompatibleOptions): ChatProvider {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  return {
    name: OPENAI_COMPATIBLE,
    async *answer({ question, history, facts, signal }: ChatQuestion) {
      const campaignFacts = await allFacts(facts);
      const timeout = AbortSignal.timeout(options.timeoutMs);
      let response: Response;
      try {
        response = await modelFetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'text/event-stream',
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify({
            model: options.model,
            stream: true,
            max_tokens: options.maxTokens ?? MODEL_BOUNDS_DEFAULTS.chatMaxTokens,
            messages: [
              { role: 'system', content: `${SYSTEM_PROMPT}\n\nCampaign facts:\n${JSON.stringify(campaignFacts)}` },
              ...windowOf(
                history.map(({ role, content }) => ({ role, content })),
                options.history ?? MODEL_BOUNDS_DEFAULTS.history,
              ),
              { role: 'user', content: question },
            ],
          }),
          signal: AbortSignal.any([signal, timeout]),
        });
      } catch {
        if (signal.aborted) return;
        throw new ChatProviderError(
          timeout.aborted ? 'the chat model did not answer in time' : 'the chat model could not be reached',
          timeout.aborted ? 504 : 503,
        );
      }
      if (!response.ok || !response.body) {
        await response.body?.cancel();
        throw new ChatProviderError(`the chat model answered HTTP ${response.status}`, response.status);
      }
      try {
        for await (const line of linesOf(response.body)) {
          const event = eventOf(line);
          if (event === 'done') return;
          const text = event?.choices?.[0]?.delta?.content;
          if (text) yield text;
        }
      } catch (error) {
        if (signal.aborted || error instanceof ChatProviderError) throw error;
        throw new ChatProviderError(
          timeout.aborted ? 'the chat model did not finish in time' : 'the chat model broke off its answer',
          timeout.aborted ? 504 : 502,
        );
      }
      throw new ChatProviderError('the chat model ended its answer without [DONE]', 502);
    },
  };
}
