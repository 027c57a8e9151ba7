// The conversation sockets' bounds (docs/features/conversation/relay.md#one-turn-at-a-time): one turn at a time with at
// most one waiting per kind, the frame budget, and the voicePrompt cap at its worst case (a 64 KiB frame).
import { describe, expect, it } from 'vitest';
import { MAX_VOICE_PROMPT_CHARS, parseInboundFrame } from '../../lib/carriers/twilio/conversation-relay/frames';
import {
  createTurnQueue,
  frameBudget,
  joinUtterances,
  type QueuedTurn,
} from '../../lib/carriers/twilio/conversation-relay/turn-queue';

type Turn = QueuedTurn<'prompt' | 'interrupt'> & { text: string };

describe('the turn queue', () => {
  it('runs one turn at a time; 10,000 prompts sent meanwhile wait as one, joined within the cap, after an interruption', async () => {
    const ran: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const failures: unknown[] = [];
    const prompt = (text: string): Turn => ({
      kind: 'prompt',
      text,
      run: async () => {
        ran.push(`prompt:${text}`);
        if (text === 'first') await held;
      },
    });
    const queue = createTurnQueue<Turn['kind'], Turn>({
      merge: (waiting, newer) =>
        waiting.kind === 'prompt' ? prompt(joinUtterances(waiting.text, newer.text, MAX_VOICE_PROMPT_CHARS)) : newer,
      failed: (error) => failures.push(error),
    });
    queue.push(prompt('first'));
    expect(queue.busy).toBe(true);
    for (let i = 0; i < 10_000; i += 1) {
      queue.push(prompt(`w${i}`));
      if (i === 5) queue.push({ kind: 'interrupt', text: 'heard', run: async () => void ran.push('interrupt') });
    }
    // However much was sent: at most one waiting turn of each kind.
    expect(queue.waiting).toBe(2);
    release();
    await queue.idle();
    expect(failures).toEqual([]);
    expect(ran).toHaveLength(3);
    expect(ran.slice(0, 2)).toEqual(['prompt:first', 'interrupt']);
    const merged = ran[2]!.slice('prompt:'.length);
    expect(merged.length).toBe(MAX_VOICE_PROMPT_CHARS);
    expect(merged.startsWith('w0 w1 w2 w3')).toBe(true);
  });

  it('goes on after a turn that throws', async () => {
    const failures: unknown[] = [];
    const ran: string[] = [];
    const queue = createTurnQueue<'a' | 'b', QueuedTurn<'a' | 'b'>>({ failed: (error) => failures.push(error) });
    queue.push({ kind: 'a', run: () => Promise.reject(new Error('boom')) });
    queue.push({ kind: 'b', run: async () => void ran.push('b') });
    await queue.idle();
    expect(failures).toHaveLength(1);
    expect(ran).toEqual(['b']);
  });
});

describe('the frame budget', () => {
  it('takes a burst, then the rate', () => {
    let now = 0;
    const budget = frameBudget({ burst: 3, perSecond: 2 }, () => now);
    expect([budget.take(), budget.take(), budget.take(), budget.take()]).toEqual([true, true, true, false]);
    now += 500; // one frame's worth at 2 a second
    expect([budget.take(), budget.take()]).toEqual([true, false]);
    now += 60_000; // never more than the burst
    expect(Array.from({ length: 4 }, () => budget.take())).toEqual([true, true, true, false]);
  });
});

describe('the voicePrompt cap', () => {
  it("cuts a 64 KiB frame's prompt to 4,000 characters, within 50 ms", () => {
    const frame = JSON.stringify({ type: 'prompt', voicePrompt: '1 '.repeat(32 * 1024 - 40), last: true });
    expect(frame.length).toBeLessThanOrEqual(64 * 1024);
    const started = performance.now();
    const parsed = parseInboundFrame(frame);
    const elapsed = performance.now() - started;
    expect(parsed).toMatchObject({ type: 'prompt', last: true });
    expect(parsed?.type === 'prompt' && parsed.voicePrompt.length).toBe(MAX_VOICE_PROMPT_CHARS);
    // The budget of a hostile input (issue 40): generous for a loaded 2-CPU machine.
    expect(elapsed).toBeLessThan(50);
    const interrupt = parseInboundFrame(
      JSON.stringify({ type: 'interrupt', utteranceUntilInterrupt: 'x'.repeat(60_000), durationUntilInterruptMs: 1 }),
    );
    expect(interrupt?.type === 'interrupt' && interrupt.utteranceUntilInterrupt.length).toBe(MAX_VOICE_PROMPT_CHARS);
  });
});
