import http from 'node:http';
import { listenOnLoopback } from './http-receiver';

export interface ChatCompletionRequest {
  path: string;
  authorization: string | undefined;
  body: { model: string; stream: boolean; messages: Array<{ role: string; content: string }> };
  /** Resolves when the API closes this request's connection. */
  closed: Promise<void>;
}

/**
 * A local OpenAI-compatible chat completions endpoint: it streams server-sent events as that API does
 * (`data: {"choices":[{"delta":{"content":...}}]}` lines, then `data: [DONE]`). `script` writes each
 * answer and may hold it open (awaiting what the test releases) between fragments.
 */
/** One fragment of the answer, as a `data:` event of the stream (the headers go with the first). */
export function sendDelta(res: http.ServerResponse, text: string) {
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(
    `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text } }] })}\n\n`,
  );
}

export const finishStream = (res: http.ServerResponse) => res.end('data: [DONE]\n\n');

export async function startChatModelServer(
  script: (request: ChatCompletionRequest, res: http.ServerResponse) => Promise<void> | void,
) {
  const requests: ChatCompletionRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ChatCompletionRequest = {
        path: req.url ?? '',
        authorization: req.headers.authorization,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatCompletionRequest['body'],
        closed: new Promise((resolve) => res.once('close', () => resolve())),
      };
      requests.push(request);
      void Promise.resolve(script(request, res)).catch(() => res.destroy());
    });
  });
  return { baseUrl: `http://127.0.0.1:${await listenOnLoopback(server)}/v1`, requests };
}
