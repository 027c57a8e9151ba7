import { filled } from '../../calls/simulated-conversation';

/**
 * What a call's TwiML is built from: the call's agent (null when its campaign names none) and its lead. Read by
 * api/carriers/twilio-callbacks.ts for the call the request's URL names.
 */
export interface TwimlCall {
  agent: {
    language: string;
    voiceId: string;
    script: { openingLine: string; questions: string[]; closing: string };
  } | null;
  lead: { name: string | null; fields: Record<string, unknown> };
}

const escapeXml = (text: string) =>
  text.replace(/[<>&'"]/g, (char) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[char]!);

/**
 * THE SEAM: the TwiML Twilio obeys when the call is answered (POST .../calls/{attemptId}/twiml). For now the
 * agent's opening line and closing, each a <Say> in the agent's language with the lead's {{fields}} filled, then
 * <Hangup/>; a call without an agent hangs up at once. The agent's full script (questions by <Gather input="speech">,
 * voicemail drop on a machine's beep) replaces this function's body and nothing else: its input is the call, its
 * output the document, and the route, signature check and call lookup around it stay as they are. It is pure: no
 * I/O, the same call gives the same document.
 */
export function twimlOfCall(call: TwimlCall): string {
  const say = (text: string) =>
    text ? `<Say language="${escapeXml(call.agent!.language)}">${escapeXml(filled(text, call.lead))}</Say>` : '';
  const body = call.agent ? `${say(call.agent.script.openingLine)}${say(call.agent.script.closing)}` : '';
  return `<?xml version="1.0" encoding="UTF-8"?><Response>${body}<Hangup/></Response>`;
}
