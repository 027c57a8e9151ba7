import { filled } from '../calls/simulated-conversation';
import { scriptStepOf, type ScriptCall, type ScriptStep, type ScriptTurn } from '../carriers/script-walk';
import { tokensOf, type DialogueEngine } from './engine';
import { recogniseIntent } from './intents';

/**
 * The simplest dialogue engine (docs/features/conversation-relay.md#the-script-engine): the agent's script walk
 * (lib/carriers/script-walk.ts, the same steps and turns as the speech Gathers make) over a conversation. The carrier
 * says the opening line as its welcome greeting; at the start the engine asks question 1, and each complete utterance
 * of the lead is the answer to the question asked last: stored as the lead's turn, then the next question, or the
 * closing and the end. An utterance recognised as an opt-out (lib/dialogue/intents.ts) is answered with the closing at
 * once, and the conversation ends (the number is not put on the Do-Not-Call list here).
 */

/** What the carrier says when the conversation opens: the agent's opening line, the lead's fields filled. */
export function scriptGreeting(call: ScriptCall): string {
  return call.agent ? filled(call.agent.script.openingLine, call.lead) : '';
}

/** The words of a step the agent still has to say (the greeting, said by the carrier, left out of step 0). */
const wordsOf = (step: ScriptStep, greeting: string) =>
  [...step.lines.filter((line, index) => !(step.step === 0 && index === 0 && line === greeting)), step.question]
    .filter((text): text is string => !!text)
    .join(' ');

/**
 * The script engine of one call. `record` stores a step's turns once per call, step and part (a replayed step adds
 * nothing): the transcript is the Gather walk's.
 */
export function createScriptEngine(
  call: ScriptCall,
  record: (turns: readonly ScriptTurn[]) => Promise<unknown>,
): DialogueEngine {
  let step = 0;
  let ended = !call.agent;
  const greeting = scriptGreeting(call);
  return {
    get ended() {
      return ended;
    },
    async start() {
      const first = scriptStepOf(call, { kind: 'answer' });
      await record(first.turns);
      ended = first.question === null;
      return wordsOf(first, greeting);
    },
    async *onPrompt(text: string) {
      if (ended || !call.agent) return;
      step += 1;
      let next = scriptStepOf(call, { kind: 'step', step, heard: { text, confidence: null } });
      if (recogniseIntent(text, call.agent.language).kind === 'opt_out') {
        // The lead's turn, then the closing (no further question).
        const closing = filled(call.agent.script.closing, call.lead);
        next = {
          step,
          turns: [
            next.turns[0]!,
            ...(closing ? [{ step, part: 1, speaker: 'agent' as const, text: closing, confidence: null }] : []),
          ],
          lines: closing ? [closing] : [],
          question: null,
        };
      }
      ended = next.question === null;
      // Stored while the words go out; the answer is not held up by the write.
      const stored = Promise.resolve(record(next.turns));
      stored.catch(() => undefined); // awaited below, after the words
      yield* tokensOf(wordsOf(next, greeting));
      await stored;
    },
    onInterrupt() {
      // The script's turns are stored whole: trimming the agent's turn to what was heard is not in this engine yet.
    },
  };
}
