import { callbackBookedResult, callbackData, resolveCallback } from '../../lib/conversation/callback-booking';
import type { DialogueToolCall, DialogueToolResult, DialogueTools, FunctionTools } from '../../lib/conversation/tools';
import { log } from '../../lib/log';
import { boundedSummary } from '../../lib/conversation/transfer-summary';
import type { RunSql } from '../../lib/run-sql';
import { markConversationOutcome, requestTransfer, toolCallOf, type ToolCallRow } from './conversation-tool-store';

/**
 * The four tools of a call's conversation (docs/features/conversation/tools.md), run by its transport for its engine:
 * - end_call: the conversation ends after the agent's words;
 * - opt_out: the number joins the workspace's Do-Not-Call list at once, the call ends opted_out (its ladder ends);
 * - schedule_callback: the lead's words read as a time in the lead's time zone (lib/conversation/callback-time.ts), moved
 *   to the campaign's calling window's next opening when outside it; the call ends callback_requested and the lead's
 *   next attempt is then (the ladder, which still checks the window and the Do-Not-Call list when it dials);
 * - transfer_to_human: the conversation ends handing the call to the agent's transfer number (`onTransfer`), cold or
 *   warm (its summary, at most TRANSFER_SUMMARY_MAX_CHARS, recorded for the human's leg); the call ends transferred
 *   when the human answers (api/carriers/twilio-transfer.ts, api/carriers/telnyx-transfer.ts).
 * A test call's tools act on the test call only: opt_out lists no number.
 */
export interface CallToolsOptions {
  sql: RunSql;
  callId: string;
  /** opt_out listed this number: its other waiting ladders are told (lib/temporal/do-not-call.ts). */
  onListed?: (listed: { workspaceId: string; phone: string }) => Promise<unknown>;
  /** The conversation is to end handing the call on: the transport's part (its `end` frame's handoffData). */
  onTransfer(summary: string | null): void;
  /** The agent's custom functions (api/conversation/conversation-functions.ts); absent: none is offered. */
  functions?: FunctionTools;
  now?: () => Date;
}

const result = (ok: boolean, text: string, endsConversation: boolean): DialogueToolResult => ({
  ok,
  result: text,
  endsConversation,
});

export function createCallTools(options: CallToolsOptions): DialogueTools {
  const now = options.now ?? (() => new Date());
  let row: Promise<ToolCallRow | null> | undefined;
  const call = async () => {
    row ??= toolCallOf(options.sql, options.callId);
    const found = await row;
    if (!found) throw new Error(`call ${options.callId} not found`);
    return found;
  };

  const tools: Record<DialogueToolCall['name'], (args: Record<string, unknown>) => Promise<DialogueToolResult>> = {
    end_call: () => Promise.resolve(result(true, 'The call ends after your words.', true)),

    async opt_out() {
      const { kind } = await call();
      const doNotCall = kind !== 'test';
      const { marked, listed } = await markConversationOutcome(options.sql, options.callId, 'opted_out', { doNotCall });
      if (!marked) return result(false, 'The call is over.', true);
      if (listed) await options.onListed?.(listed);
      return result(
        true,
        doNotCall
          ? 'The number is on the do-not-call list: it will not be called again.'
          : 'A test call: no number was put on the do-not-call list.',
        true,
      );
    },

    async schedule_callback(args) {
      const target = await call();
      const booked = resolveCallback(args, {
        phone: target.toNumber,
        language: target.language,
        callingWindow: target.callingWindow,
        now: now(),
      });
      if (!booked.ok) return result(false, booked.result, false);
      const { marked } = await markConversationOutcome(options.sql, options.callId, 'callback_requested', {
        callbackAt: booked.at,
      });
      if (!marked) return result(false, 'The call is over.', true);
      return { ...result(true, callbackBookedResult(booked), true), data: callbackData(booked) };
    },

    async transfer_to_human(args) {
      const target = await call();
      if (!target.transferNumber)
        return result(false, 'No human can take this call: offer to have someone call back instead.', false);
      const summary = typeof args.summary === 'string' ? boundedSummary(args.summary) : null;
      if (!(await requestTransfer(options.sql, options.callId, summary)))
        return result(false, 'The call is over.', true);
      options.onTransfer(summary);
      return result(true, 'The call is being transferred to a colleague after your words.', true);
    },
  };

  return {
    ...(options.functions && { functions: options.functions }),
    async run(toolCall) {
      try {
        return await tools[toolCall.name](toolCall.arguments);
      } catch (error) {
        log.error({ err: error, callId: options.callId, tool: toolCall.name }, 'conversation tool failed');
        return result(false, 'The tool failed.', false);
      }
    },
  };
}
