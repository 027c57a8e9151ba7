import { functionsOfCall, type BoundFunctionRow } from '../../lib/functions/function-store';
import { invokeFunction, type InvokeDependencies } from '../../lib/functions/invoke-function';
import type { FunctionTools } from '../../lib/conversation/tools';

/**
 * A call's custom functions (docs/features/functions.md) for its engine: the ones bound to its agent, read once when
 * the engine first offers them, each call of one a signed request sent at most once per tool call.
 */
export function createCallFunctions(deps: InvokeDependencies, callId: string): FunctionTools {
  return boundFunctionTools(
    () => functionsOfCall(deps.sql, callId),
    async (fn, toolCallId, args) => {
      const { ok, result } = await invokeFunction(deps, { callId, toolCallId, fn, arguments: args });
      return { ok, result };
    },
  );
}

/**
 * Functions read once (on their first offer) and run by `run` when the engine calls one by its name: a call's send
 * the request (createCallFunctions), a web test session's say what would have been sent (api/test-sessions).
 */
export function boundFunctionTools(
  read: () => Promise<BoundFunctionRow[]>,
  run: (fn: BoundFunctionRow, toolCallId: string, args: unknown) => Promise<{ ok: boolean; result: string }>,
): FunctionTools {
  let bound: Promise<BoundFunctionRow[]> | undefined;
  const rows = () => (bound ??= read());
  return {
    async offered() {
      return (await rows()).map(({ name, description, parameters, fillerLine, slowLine, afterQuestion }) => ({
        name,
        description,
        parameters,
        fillerLine,
        slowLine,
        afterQuestion,
      }));
    },
    async run({ name, toolCallId, arguments: args }) {
      const fn = (await rows()).find((row) => row.name === name);
      if (!fn) return { ok: false, result: `Error: there is no function named "${name}".` };
      return run(fn, toolCallId, args);
    },
  };
}
