import { callbackBookedResult, callbackData, resolveCallback } from '../../lib/conversation/callback-booking';
import type { DialogueToolCall, DialogueToolResult, DialogueTools } from '../../lib/conversation/tools';
import { log } from '../../lib/log';
import type { RunSql } from '../../lib/run-sql';
import { markSessionOutcome } from './session-store';
import { boundFunctionTools } from '../conversation/conversation-functions';
import { functionsOfAgent } from '../../lib/functions/function-store';

/**
 * The four tools of a web test session (docs/features/test-sessions.md#tools): they resolve and report as a call's do
 * (api/conversation/conversation-tools.ts, sharing its callback reading, lib/conversation/callback-booking.ts), but
 * act on nothing outside the session: no number is put on the Do-Not-Call list, no attempt is booked, no transfer is
 * dialed. Each says what would have happened, and marks the session's outcome (TestSession.outcome) as the call's
 * would be marked. `onRun` hears every use (the socket's `tool` frame). The agent's custom functions are offered too,
 * and none is sent (docs/features/functions.md#in-a-web-test-session).
 */
export interface SessionToolsOptions {
  sql: RunSql;
  sessionId: string;
  /** The test lead's phone (E.164; null: none given, callback times are read in UTC). */
  leadPhone: string | null;
  /** The agent's language (callback times are read and said in it) and transfer number. */
  language: string;
  transferNumber: string | null;
  onRun?(call: DialogueToolCall, result: DialogueToolResult): void;
  now?: () => Date;
  /** The session's agent: its custom functions are offered, and none is sent. */
  agentId: string;
  /** Hears every use of a custom function (the socket's `tool` frame). */
  onFunction?(call: { name: string; arguments: unknown }, result: { ok: boolean; result: string }): void;
}

const result = (ok: boolean, text: string, endsConversation: boolean): DialogueToolResult => ({
  ok,
  result: text,
  endsConversation,
});

const SESSION_OVER = 'The session is over.';

export function createSessionTools(options: SessionToolsOptions): DialogueTools {
  const now = options.now ?? (() => new Date());
  const { sql, sessionId } = options;
  const number = options.leadPhone ?? 'the lead’s number';

  const tools: Record<DialogueToolCall['name'], (args: Record<string, unknown>) => Promise<DialogueToolResult>> = {
    end_call: () => Promise.resolve(result(true, 'The call ends after your words.', true)),

    async opt_out() {
      if (!(await markSessionOutcome(sql, sessionId, 'opted_out'))) return result(false, SESSION_OVER, true);
      return result(
        true,
        `A test session: ${number} would be put on the do-not-call list; no number was listed.`,
        true,
      );
    },

    async schedule_callback(args) {
      // A test session has no campaign: the default calling window, as a test call's.
      const booked = resolveCallback(args, {
        phone: options.leadPhone,
        language: options.language,
        callingWindow: null,
        now: now(),
      });
      if (!booked.ok) return result(false, booked.result, false);
      if (!(await markSessionOutcome(sql, sessionId, 'callback_requested'))) return result(false, SESSION_OVER, true);
      return {
        ...result(true, `${callbackBookedResult(booked)} A test session: no attempt was booked.`, true),
        data: callbackData(booked),
      };
    },

    async transfer_to_human() {
      if (!options.transferNumber)
        return result(false, 'No human can take this call: offer to have someone call back instead.', false);
      if (!(await markSessionOutcome(sql, sessionId, 'transferred'))) return result(false, SESSION_OVER, true);
      return result(
        true,
        `A test session: the call would be transferred to ${options.transferNumber} after your words; nothing was dialed.`,
        true,
      );
    },
  };

  return {
    // The agent's custom functions, offered as on a call (the model sees them, the script calls them at their question),
    // but a session's tools act on nothing real: nothing is sent to the customer's endpoint.
    functions: boundFunctionTools(
      () => functionsOfAgent(sql, options.agentId),
      (fn, _toolCallId, args) => {
        const said = {
          ok: true,
          result: `A test session: ${fn.name} would be called with ${JSON.stringify(args) ?? '{}'}; no request was sent.`,
        };
        options.onFunction?.({ name: fn.name, arguments: args }, said);
        return Promise.resolve(said);
      },
    ),
    async run(toolCall) {
      let ran: DialogueToolResult;
      try {
        ran = await tools[toolCall.name](toolCall.arguments);
      } catch (error) {
        log.error({ err: error, sessionId, tool: toolCall.name }, 'test session tool failed');
        ran = result(false, 'The tool failed.', false);
      }
      options.onRun?.(toolCall, ran);
      return ran;
    },
  };
}
