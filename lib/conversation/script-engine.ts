import { filled } from '../lead-placeholders';
import { log } from '../log';
import {
  disclosureOf,
  NO_ANSWER_TEXT,
  OPTED_OUT_LINES,
  scriptStepOf,
  type ScriptCall,
  type ScriptStep,
} from './script-walk';
import { tokensOf, type ConversationTurn, type DialogueContext, type DialogueEngine } from './engine';
import { recogniseIntent } from './intents';
import { asksSomething, asksToRepeat, spokenAnswerOf } from './knowledge-answer';
import { silenceLine } from './silence';
import type { DialogueToolCall, DialogueToolResult, OfferedFunction } from './tools';
import { ruleLanguageOf, type RuleLanguage } from './utterance';
import { SLOW_LINE_AFTER_MS, stillRunningAfter } from './slow-line';
import { scriptTransferSummary, type ScriptAnswer } from './transfer-summary';

/**
 * The dialogue engine that needs no model (docs/features/conversation/relay.md#the-script-engine): the agent's script
 * walk (lib/conversation/script-walk.ts, the same steps and turns as the speech Gathers make) over a conversation, with the
 * dialogue rules (lib/conversation/intents.ts) deciding when a tool runs instead of the next question:
 * - an opt-out: opt_out, an apology and goodbye, the end;
 * - a callback with a time ("tomorrow at three"): schedule_callback, the time confirmed, the end; without a time
 *   ("call me later"), or one the rules cannot read: the agent asks when, and the question asked before waits;
 * - a request for a person: transfer_to_human, said, and the conversation ends handing the call on; an agent without a
 *   transfer number offers a callback instead, and the question asked before waits;
 * - a question the script does not cover ("do you ship to Canada?"): the best passage of the agent's knowledge,
 *   shortened to a sentence or two (lib/conversation/knowledge-answer.ts), then the question asked last again; with no
 *   passage, the agent says it cannot answer and offers a person (transfer_to_human, when the agent has a transfer
 *   number) or else a callback;
 * - after an offer (a person, a callback): yes takes it (the transfer, or the agent asks when), no goes back to the
 *   question asked last; anything else is read as if no offer had been made;
 * - "sorry?", "could you repeat that?": the agent's last words again;
 * - anything else: the answer to the question asked last, then the next question, or the closing and the end.
 * The carrier says the opening line as its welcome greeting; at the start the engine asks question 1 (or says the
 * agent's first message, when it has one, before it). Turns are stored per utterance: step n is the lead's n-th
 * utterance (part 0 the lead, then the tool and the agent's lines), step 0 the start.
 */

/** What the carrier says when the conversation opens: the agent's opening line, the lead's fields filled. */
export function scriptGreeting(call: ScriptCall): string {
  return call.agent ? filled(call.agent.script.openingLine, call.lead) : '';
}

/** The engine's own lines around its tools, in the languages the dialogue rules read (the others: English). */
const LINES: Record<
  RuleLanguage,
  {
    optedOut: string;
    askWhen: string;
    callbackBooked: (at: string) => string;
    transferring: string;
    nobodyToTransfer: string;
    cannotAnswer: string;
    offerPerson: string;
    offerCallback: string;
    noProblem: string;
  }
> = {
  en: {
    optedOut: OPTED_OUT_LINES.en,
    askWhen: 'Of course. When would be a good time to call you back?',
    callbackBooked: (at) => `Of course. We'll call you back on ${at}. Goodbye.`,
    transferring: 'Of course, let me put you through to a colleague. One moment, please.',
    nobodyToTransfer: "I'm sorry, nobody can take the call right now. Would you like us to call you back later?",
    cannotAnswer: "I'm sorry, I don't have that information.",
    offerPerson: 'Would you like me to put you through to a colleague?',
    offerCallback: 'Would you like someone to call you back about it?',
    noProblem: 'No problem.',
  },
  es: {
    optedOut: OPTED_OUT_LINES.es,
    askWhen: 'Por supuesto. ¿Cuándo le viene bien que le llamemos?',
    callbackBooked: (at) => `Por supuesto. Le llamaremos el ${at}. Adiós.`,
    transferring: 'Por supuesto, le paso con un compañero. Un momento, por favor.',
    nobodyToTransfer: 'Lo siento, ahora mismo no hay nadie disponible. ¿Quiere que le llamemos más tarde?',
    cannotAnswer: 'Lo siento, no tengo esa información.',
    offerPerson: '¿Quiere que le pase con un compañero?',
    offerCallback: '¿Quiere que alguien le llame para contárselo?',
    noProblem: 'De acuerdo.',
  },
};

export function createScriptEngine(
  context: DialogueContext,
  options: { slowLineAfterMs?: number } = {},
): DialogueEngine {
  const slowLineAfterMs = options.slowLineAfterMs ?? SLOW_LINE_AFTER_MS;
  const { call } = context;
  const agent = call.agent;
  const lines = LINES[ruleLanguageOf(agent?.language ?? 'en')];
  const greeting = scriptGreeting(call);
  /** Said by the carrier as its welcome greeting (lib/carriers/twilio/twiml.ts relayWelcomeGreeting): the workspace's
   * disclosure and the opening line, step 0's first lines; the engine never says them again. */
  const welcomed = new Set([disclosureOf(call), greeting].filter((text) => text !== ''));
  /** The script's question answered next (1-based); its step in the walk. */
  let question = 0;
  /** The lead's utterances so far: the step their turns are stored under. */
  let utterances = 0;
  let ended = !agent;
  /** The script's question asked last (asked again after a silence), and the silences since the lead last spoke. */
  let asking: string | null = null;
  let silences = 0;
  /** The agent's turns of its last answer, in order, for an interruption to trim. */
  let lastSaid: { step: number; part: number; text: string }[] = [];
  /** What the agent offered in its last answer, for the lead's yes or no: a person (a transfer) or a callback. */
  let offered: 'person' | 'callback' | null = null;
  /** The question the agent could not answer, for the colleague a transfer reaches (its summary). */
  let unanswered: string | null = null;
  const canTransfer = !!agent?.transferNumber;
  /** The script's questions answered so far and the lead's answers: a warm transfer's summary tells them. */
  const answersGiven: ScriptAnswer[] = [];
  /** The agent's custom functions bound to a question of its script, read once (a failure to read them: none). */
  let functions: Promise<readonly OfferedFunction[]> | undefined;
  const scriptFunctions = () =>
    (functions ??= (context.tools.functions?.offered() ?? Promise.resolve([])).then(
      (all) => all.filter((fn) => fn.afterQuestion !== null),
      (error: unknown) => {
        log.error({ err: error }, 'script engine: the custom functions could not be read; none is called');
        return [];
      },
    ));

  /** The words of a script step still to say (the welcome greeting's, said by the carrier, left out of step 0). */
  const wordsOf = (step: ScriptStep) =>
    [...step.lines.filter((line) => !(step.step === 0 && welcomed.has(line))), step.question]
      .filter((text): text is string => !!text)
      .join(' ');

  /** Stores the turns (the agent's remembered for trimming) and answers the agent's words, as tokens. */
  async function* say(turns: ConversationTurn[], words: string): AsyncGenerator<string, void, undefined> {
    lastSaid = agentTurnsSaid(turns);
    // Stored while the words go out; the answer is not held up by the write.
    const stored = Promise.resolve(context.record(turns));
    stored.catch(() => undefined); // awaited below, after the words
    yield* tokensOf(words);
    await stored;
  }

  async function useTool(
    step: number,
    leadTurn: ConversationTurn,
    toolCall: DialogueToolCall,
  ): Promise<{ turns: ConversationTurn[]; result: DialogueToolResult }> {
    const result = await context.tools.run(toolCall);
    const toolTurn: ConversationTurn = {
      step,
      part: 1,
      speaker: 'tool',
      text: toolCall.name,
      confidence: null,
      tool: { name: toolCall.name, arguments: toolCall.arguments, result: result.result, ok: result.ok },
    };
    return { turns: [leadTurn, toolTurn], result };
  }

  /**
   * One call of a function bound to the question the lead just answered, its argument `answer` the lead's words, its
   * tool-call id the question (so a step said again is never sent twice). Yields the filler and slow lines as they are
   * to be said; adds to `turns` those lines, the tool's turn and, when it answered 2xx, its answer as the agent's line.
   */
  async function* functionCall(
    step: number,
    fn: OfferedFunction,
    answer: string,
    turns: ConversationTurn[],
    answers: string[],
  ): AsyncGenerator<string> {
    const line = (text: string) => turns.push(agentTurn(step, 0, text));
    if (fn.fillerLine) {
      line(fn.fillerLine);
      yield fn.fillerLine;
    }
    const args = { answer };
    const running = context.tools
      .functions!.run({
        name: fn.name,
        toolCallId: `script-question-${fn.afterQuestion}`,
        arguments: args,
      })
      .catch((error: unknown) => {
        log.error({ err: error, tool: fn.name }, 'script engine: a custom function failed');
        return { ok: false, result: `Error: ${fn.name} failed.` };
      });
    if (fn.slowLine && (await stillRunningAfter(running, slowLineAfterMs))) {
      line(fn.slowLine);
      yield fn.slowLine;
    }
    const result = await running;
    turns.push({
      step,
      part: 0,
      speaker: 'tool',
      text: fn.name,
      confidence: null,
      tool: { name: fn.name, arguments: args, result: result.result, ok: result.ok },
    });
    if (result.ok && result.result) {
      line(result.result);
      answers.push(result.result);
    }
  }

  /** The agent's turns of an answer the engine itself says (not the welcome greeting's), for an interruption to trim. */
  const agentTurnsSaid = (turns: readonly ConversationTurn[]) =>
    turns
      .filter((turn) => turn.speaker === 'agent' && !(turn.step === 0 && welcomed.has(turn.text)))
      .map(({ step, part, text }) => ({ step, part, text }));

  /** The best passage of the agent's knowledge for a question, as said (null: none, or the search failed). */
  async function knowledgeAnswer(question: string): Promise<string | null> {
    const passages = await context.knowledge(question).catch((error: unknown) => {
      log.warn({ err: error }, 'script engine: knowledge search failed, answering without passages');
      return [];
    });
    const best = passages[0];
    return (best && spokenAnswerOf(best, question)) || null;
  }

  const agentTurn = (step: number, part: number, text: string): ConversationTurn => ({
    step,
    part,
    speaker: 'agent',
    text,
    confidence: null,
  });

  /** The lead's turn, then the agent's lines (the empty ones left out), stored and said. */
  const answerWith = (leadTurn: ConversationTurn, said: readonly (string | null)[]) => {
    const spoken = said.filter((line): line is string => !!line);
    return say([leadTurn, ...spoken.map((line, index) => agentTurn(leadTurn.step, index + 1, line))], spoken.join(' '));
  };

  return {
    get ended() {
      return ended;
    },
    async start() {
      if (!agent) return '';
      const first = scriptStepOf(call, { kind: 'answer' });
      question = 1;
      const words = [context.firstMessage, wordsOf(first)].filter((text): text is string => !!text).join(' ');
      const turns: ConversationTurn[] = first.turns.map((turn) => ({ ...turn, step: 0 }));
      if (context.firstMessage) {
        // After the welcome greeting's turns (the disclosure, the opening line), before the first question.
        const after = turns.filter((turn) => turn.speaker === 'agent' && welcomed.has(turn.text)).length;
        const firstPart = turns[0]?.part ?? 0;
        turns.splice(after, 0, agentTurn(0, 0, context.firstMessage));
        turns.forEach((turn, index) => (turn.part = firstPart + index));
      }
      ended = first.question === null;
      asking = first.question;
      lastSaid = agentTurnsSaid(turns);
      await context.record(turns);
      return words;
    },
    async *onPrompt(text: string) {
      if (ended || !agent) return;
      const step = ++utterances;
      silences = 0;
      const leadTurn: ConversationTurn = { step, part: 0, speaker: 'lead', text, confidence: null };
      const intent = recogniseIntent(text, agent.language);
      const offer = offered;
      const couldNotAnswer = unanswered;
      offered = unanswered = null;

      if (intent.kind === 'opt_out') {
        const { turns, result } = await useTool(step, leadTurn, { name: 'opt_out', arguments: {} });
        ended = result.endsConversation;
        return yield* say([...turns, agentTurn(step, 2, lines.optedOut)], lines.optedOut);
      }
      if (intent.kind === 'callback') {
        if (intent.timePhrase !== null) {
          const { turns, result } = await useTool(step, leadTurn, {
            name: 'schedule_callback',
            arguments: { when: text },
          });
          if (result.ok) {
            ended = result.endsConversation;
            const words = lines.callbackBooked(result.data?.localTime ?? '');
            return yield* say([...turns, agentTurn(step, 2, words)], words);
          }
          return yield* say([...turns, agentTurn(step, 2, lines.askWhen)], lines.askWhen);
        }
        return yield* answerWith(leadTurn, [lines.askWhen]);
      }
      if (intent.kind === 'wants_person' || (offer === 'person' && intent.kind === 'yes')) {
        const who = call.lead.name ?? 'The lead';
        const reason =
          intent.kind === 'wants_person' || couldNotAnswer === null
            ? `${who} asked to speak to a person: "${text}"`
            : `${who} asked what the agent could not answer: "${couldNotAnswer}"`;
        const summary = scriptTransferSummary(reason, answersGiven);
        const { turns, result } = await useTool(step, leadTurn, { name: 'transfer_to_human', arguments: { summary } });
        ended = result.endsConversation;
        if (!result.ok && !ended) offered = 'callback';
        const words = result.ok ? lines.transferring : lines.nobodyToTransfer;
        return yield* say([...turns, agentTurn(step, 2, words)], words);
      }
      if (offer === 'callback' && intent.kind === 'yes') return yield* answerWith(leadTurn, [lines.askWhen]);
      // No to an offer: back to the script, whose question asked last still waits for its answer.
      if (offer !== null && intent.kind === 'no') return yield* answerWith(leadTurn, [lines.noProblem, asking]);
      if (asksToRepeat(text, agent.language)) {
        // "Sorry?": the agent's last words again (or the question asked last), any offer in them still standing.
        [offered, unanswered] = [offer, couldNotAnswer];
        const last = lastSaid.map((turn) => turn.text).filter((line) => line !== '');
        return yield* answerWith(leadTurn, last.length > 0 ? last : [asking]);
      }
      if (asksSomething(text, agent.language)) {
        // A question the script does not cover: the agent's knowledge answers it, then the script goes on where it was.
        const answer = await knowledgeAnswer(text);
        if (answer) return yield* answerWith(leadTurn, [answer, asking]);
        offered = canTransfer ? 'person' : 'callback';
        unanswered = text;
        return yield* answerWith(leadTurn, [lines.cannotAnswer, canTransfer ? lines.offerPerson : lines.offerCallback]);
      }

      // The answer to the question asked last: the script's next step, its turns under this utterance's step.
      const next = scriptStepOf(call, { kind: 'step', step: question, heard: { text, confidence: null } });
      const answered = question;
      const asked = agent.script.questions[answered - 1];
      if (asked) answersGiven.push({ question: filled(asked, call.lead), answer: text });
      question += 1;
      ended = next.question === null;
      asking = next.question;
      const stepTurns = next.turns.map((turn) => ({ ...turn, step }));
      const bound = (await scriptFunctions()).filter((fn) => fn.afterQuestion === answered);
      if (bound.length === 0) return yield* say(stepTurns, wordsOf(next));
      // The functions bound to this question run first (docs/features/functions.md#what-the-person-hears), then the next step.
      const [lead, ...rest] = stepTurns;
      const said: ConversationTurn[] = [];
      const answers: string[] = [];
      for (const fn of bound) for await (const line of functionCall(step, fn, text, said, answers)) yield `${line} `;
      const turns = [lead!, ...said, ...rest].map((turn, part) => ({ ...turn, part }));
      yield* say(turns, [...answers, wordsOf(next)].filter(Boolean).join(' '));
    },
    async *onSilence() {
      // Silence once: are you still there, and the question again; twice in a row: goodbye, and the end. Stored as the
      // Gather walk stores a question nobody answered: the lead's turn "(no answer)".
      if (ended || !agent) return;
      const step = ++utterances;
      silences += 1;
      offered = unanswered = null; // the question asked last is asked again: a yes now answers it
      const leadTurn: ConversationTurn = { step, part: 0, speaker: 'lead', text: NO_ANSWER_TEXT, confidence: null };
      const line = silenceLine(agent.language, silences);
      if (line.ends) {
        ended = true;
        return yield* say([leadTurn, agentTurn(step, 1, line.text)], line.text);
      }
      const words = [line.text, asking].filter((text): text is string => !!text).join(' ');
      yield* say([leadTurn, agentTurn(step, 1, line.text), ...(asking ? [agentTurn(step, 2, asking)] : [])], words);
    },
    async onInterrupt(heardUntil: string) {
      // What the lead heard of the agent's last answer: the turns wholly said stay, the one cut short is trimmed to
      // what was said of it, the ones never reached are removed (trimmed to nothing).
      let heard = heardUntil.trim();
      for (const turn of lastSaid) {
        const kept = heard.length >= turn.text.length ? turn.text : heard;
        heard = heard.slice(turn.text.length).trim();
        if (kept !== turn.text) await context.trim(turn.step, turn.part, kept);
      }
      lastSaid = [];
    },
  };
}
