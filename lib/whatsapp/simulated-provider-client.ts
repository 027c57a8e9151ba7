import { createJsonHttp, type JsonHttpResponse } from '../http/json-http';
import {
  WhatsAppProviderError,
  type WhatsAppProvider,
  type WhatsAppQualityRating,
  type WhatsAppTemplateStatus,
} from './provider';

/** The Graph API version the client speaks (the simulator takes any vN.N). */
export const GRAPH_API_VERSION = 'v21.0';

/** Sockets kept open to the provider: a worker's sends at once need no more. */
const PROVIDER_SOCKETS = 64;

interface GraphErrorBody {
  error?: { message?: string; code?: number; error_user_title?: string; error_data?: { details?: string } };
}

/**
 * The WhatsAppProvider over the simulated provider's Graph-API-shaped HTTP API (server.ts), as a Cloud
 * API client speaks to Meta: a refusal in Meta's error shape becomes a WhatsAppProviderError with its
 * code, title (the message without its "(#code) " prefix) and HTTP status; an answer that is not Meta's
 * shape (a proxy's 502, an unreachable provider) is a plain Error, for the caller to retry.
 */
export function createSimulatedWhatsAppClient({ baseUrl }: { baseUrl: string }): WhatsAppProvider {
  const http = createJsonHttp({ sockets: PROVIDER_SOCKETS });
  const call = async <T>(method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const url = `${baseUrl}/${GRAPH_API_VERSION}${path}`;
    const response = await http.request(method, url, { body, headers, signal: AbortSignal.timeout(10_000) });
    if (response.status >= 200 && response.status <= 299) return JSON.parse(response.text) as T;
    throw refusal(method, path, response);
  };

  return {
    name: 'simulated',
    async sendMessage(request) {
      const { phoneNumberId, to, clientKey, message } = request;
      // Echoed in the message's statuses (Cloud API: biz_opaque_callback_data).
      const { callbackData } = request as typeof request & { callbackData?: string };
      const content =
        message.type === 'text'
          ? { type: 'text', text: { body: message.text } }
          : {
              type: 'template',
              template: {
                name: message.template.name,
                language: { code: message.template.language },
                ...(message.template.parameters.length && {
                  components: [
                    { type: 'body', parameters: message.template.parameters.map((text) => ({ type: 'text', text })) },
                  ],
                }),
              },
            };
      const answer = await call<{ messages: { id: string }[] }>(
        'POST',
        `/${encodeURIComponent(phoneNumberId)}/messages`,
        {
          messaging_product: 'whatsapp',
          recipient_type: 'individual',
          to,
          ...content,
          ...(callbackData && { biz_opaque_callback_data: callbackData }),
        },
        { 'Idempotency-Key': clientKey },
      );
      return { messageId: answer.messages[0]!.id };
    },
    async submitTemplate({ businessAccountId, name, language, category, body }) {
      const answer = await call<{ id: string; status: WhatsAppTemplateStatus }>(
        'POST',
        `/${encodeURIComponent(businessAccountId)}/message_templates`,
        { name, language, category: category.toUpperCase(), components: [{ type: 'BODY', text: body }] },
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
  };
}

function refusal(method: string, path: string, response: JsonHttpResponse): Error {
  let body: GraphErrorBody | undefined;
  try {
    body = JSON.parse(response.text) as GraphErrorBody;
  } catch {
    // Not JSON: not the provider's answer.
  }
  const error = body?.error;
  if (!error || typeof error.code !== 'number')
    return new Error(`simulated whatsapp: ${method} ${path} answered ${response.status}`);
  const title = error.error_user_title ?? error.message?.replace(/^\(#\d+\)\s*/, '') ?? 'Unknown error';
  return new WhatsAppProviderError(error.code, title, response.status);
}

/**
 * The simulator's own hook, not Meta's API (POST /simulator/inbound): the contact `from` writes `text` to
 * the number, which opens its 24-hour window and posts a `messages` webhook. For tests and an operator's
 * "make a contact reply". Answers the inbound message's wamid.
 */
export async function simulateInboundMessage(
  baseUrl: string,
  inbound: { phoneNumberId: string; from: string; text: string; name?: string },
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
