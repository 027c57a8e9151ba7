import { PROVIDER_BODY_CAP_BYTES } from '../http/capped-fetch';
import { createJsonHttp, type JsonHttpResponse } from '../http/json-http';
import {
  WhatsAppProviderError,
  type WhatsAppProvider,
  type WhatsAppQualityRating,
  type WhatsAppTemplateStatus,
} from './provider';

/** The Graph API version the client speaks: Meta's newest published description (vendor/openapi/meta-whatsapp/). */
export const GRAPH_API_VERSION = 'v23.0';

/** Sockets kept open to the provider: a worker's sends at once need no more. */
const PROVIDER_SOCKETS = 64;
/**
 * Idle sockets are closed after this long: Meta's edge (and a twin restarted under a test) closes idle
 * connections on its side, and a socket kept forever would be reused after the peer dropped it.
 */
const IDLE_SOCKET_MS = 4_000;
/** A send's answer is waited for this long; past it the send is ambiguous (docs/features/whatsapp/sending.md#no-message-twice). */
const GRAPH_TIMEOUT_MS = 10_000;

/**
 * The most of a Graph answer read: a send's answer is a message id, a template's a few KB of components; past 1 MiB
 * the socket is destroyed and the request fails (`EBODYCAP`), instead of an endless answer filling the memory.
 */
export const GRAPH_BODY_CAP_BYTES = PROVIDER_BODY_CAP_BYTES;

/** Errors of a request that never reached the provider: nothing was sent. */
const NOT_REACHED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

interface GraphErrorBody {
  error?: { message?: string; code?: number; error_user_title?: string; error_data?: { details?: string } };
}

/**
 * A send whose answer never came (a timeout, a reset connection, a 5xx or an answer without a message id): Meta may
 * have taken it. Never retried blindly: the message's workflow resolves it (docs/features/whatsapp/sending.md#no-message-twice).
 */
export class AmbiguousSendError extends Error {
  constructor(readonly reason: string) {
    super(`the send's answer was lost: ${reason}`);
    this.name = 'AmbiguousSendError';
  }
}

export interface GraphClientOptions {
  baseUrl: string;
  /** The system user's access token: every request carries `Authorization: Bearer <token>`. Unset: the embedded simulated provider. */
  accessToken?: string;
  /** Recorded with senders, templates and messages: `meta`, `meta-twin`, or `simulated`. */
  name?: string;
}

/**
 * The thin Graph API client (Meta publishes no Node SDK) of Meta's WhatsApp Cloud API, v23.0: POST
 * /{phone-number-id}/messages, POST /{waba-id}/message_templates (with the body's `example` values), GET
 * /{template-id}. A refusal in Meta's error shape becomes a WhatsAppProviderError with its code, title (the message
 * without its "(#code) " prefix) and HTTP status; a send whose answer is lost is an AmbiguousSendError; anything
 * else that is not Meta's shape (a proxy's 502, an unreachable host) is a plain Error. The same code runs against
 * Meta, the Meta twin and the embedded simulated provider: only the base URL and the token differ.
 */
export function createGraphWhatsAppClient({ baseUrl, accessToken, name = 'simulated' }: GraphClientOptions) {
  const http = createJsonHttp({
    sockets: PROVIDER_SOCKETS,
    idleMs: IDLE_SOCKET_MS,
    maxResponseBytes: GRAPH_BODY_CAP_BYTES,
  });
  const authorization: Record<string, string> = accessToken ? { authorization: `Bearer ${accessToken}` } : {};
  const call = async <T>(method: string, path: string, body?: unknown) => {
    const url = `${baseUrl}/${GRAPH_API_VERSION}${path}`;
    const response = await http.request(method, url, { body, headers: authorization, timeoutMs: GRAPH_TIMEOUT_MS });
    if (response.status >= 200 && response.status <= 299) return JSON.parse(response.text) as T;
    throw refusal(method, path, response);
  };

  const provider: WhatsAppProvider & { close(): void } = {
    name,
    async sendMessage(request) {
      const { phoneNumberId, to, message, callbackData } = request;
      const content =
        message.type === 'text'
          ? { type: 'text', text: { body: message.text } }
          : {
              type: 'template',
              template: {
                name: message.template.name,
                // Meta's description requires the policy; `deterministic` is its only value.
                language: { policy: 'deterministic', code: message.template.language },
                ...(message.template.parameters.length && {
                  components: [
                    { type: 'body', parameters: message.template.parameters.map((text) => ({ type: 'text', text })) },
                  ],
                }),
              },
            };
      const path = `/${encodeURIComponent(phoneNumberId)}/messages`;
      let answer: { messages?: { id?: string }[] };
      try {
        answer = await call('POST', path, {
          messaging_product: 'whatsapp',
          recipient_type: 'individual',
          to,
          ...content,
          ...(callbackData && { biz_opaque_callback_data: callbackData }),
        });
      } catch (error) {
        // Refused in Meta's shape with a 4xx, or never reached (refused connection, unknown host): not taken.
        // Anything else may have been.
        if (error instanceof WhatsAppProviderError && error.httpStatus < 500) throw error;
        if (NOT_REACHED.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
        throw new AmbiguousSendError(error instanceof Error ? error.message : String(error));
      }
      const id = answer.messages?.[0]?.id;
      if (!id) throw new AmbiguousSendError('an answer without a message id');
      return { messageId: id };
    },
    prepareSend: (request) => Promise.resolve(() => provider.sendMessage(request)),
    async submitTemplate({ businessAccountId, name: templateName, language, category, body, examples }) {
      const answer = await call<{ id: string; status: WhatsAppTemplateStatus }>(
        'POST',
        `/${encodeURIComponent(businessAccountId)}/message_templates`,
        {
          name: templateName,
          language,
          category: category.toUpperCase(),
          components: [{ type: 'BODY', text: body, ...(examples?.length && { example: { body_text: [examples] } }) }],
        },
      );
      return { id: answer.id, status: answer.status };
    },
    async getTemplate(templateId) {
      const answer = await call<{
        status: WhatsAppTemplateStatus;
        rejected_reason?: string | null;
        quality_score?: { score?: WhatsAppQualityRating };
      }>('GET', `/${encodeURIComponent(templateId)}?fields=status,rejected_reason,quality_score`);
      return {
        status: answer.status,
        rejectedReason: answer.rejected_reason && answer.rejected_reason !== 'NONE' ? answer.rejected_reason : null,
        qualityRating: answer.quality_score?.score ?? 'UNKNOWN',
      };
    },
    close: () => http.close(),
  };
  return provider;
}

/** The embedded simulated provider (simulators/meta-twin): the Graph client without a token. */
export const createSimulatedWhatsAppClient = ({ baseUrl }: { baseUrl: string }) =>
  createGraphWhatsAppClient({ baseUrl });

function refusal(method: string, path: string, response: JsonHttpResponse): Error {
  let body: GraphErrorBody | undefined;
  try {
    body = JSON.parse(response.text) as GraphErrorBody;
  } catch {
    // Not JSON: not the provider's answer.
  }
  const error = body?.error;
  if (!error || typeof error.code !== 'number')
    return new Error(`graph api: ${method} ${path} answered ${response.status}`);
  const title = error.error_user_title ?? error.message?.replace(/^\(#\d+\)\s*/, '') ?? 'Unknown error';
  return new WhatsAppProviderError(error.code, title, response.status);
}

/**
 * The simulator's own hook, not Meta's API (POST /simulator/inbound): the contact `from` writes `text` to
 * the number (or taps a template's quick-reply `button`), which opens its 24-hour window and posts a `messages`
 * webhook. For tests and an operator's "make a contact reply". Answers the inbound message's wamid.
 */
export async function simulateInboundMessage(
  baseUrl: string,
  inbound: { phoneNumberId: string; from: string; name?: string } & (
    { text: string } | { button: { text: string; payload?: string; context?: string } }
  ),
): Promise<{ id: string }> {
  const http = createJsonHttp({ sockets: 1 });
  try {
    const response = await http.request('POST', `${baseUrl}/simulator/inbound`, {
      body: inbound,
      signal: AbortSignal.timeout(10_000),
    });
    if (response.status !== 200)
      throw new Error(`simulated whatsapp: POST /simulator/inbound answered ${response.status}: ${response.text}`);
    return JSON.parse(response.text) as { id: string };
  } finally {
    http.close();
  }
}
