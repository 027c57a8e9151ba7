import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApertiumTranslator } from '../../lib/translations/apertium-translator';
import type { Translator } from '../../lib/translations/translator';
import type { Transcript } from '../../lib/calls/transcript';
import { VOICES } from '../../lib/voices/voices';
import { insertAgent } from '../support/agents';
import { startTestApi } from '../support/api';
import { insertAnsweredCall } from '../support/calls';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';
import { execTestProcess } from '../support/processes';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();

const scratch = mkdtempSync(path.join(os.tmpdir(), 'translations-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The real apertium, counting what it is asked. */
function countingApertium(apertiumPath = 'apertium', timeoutMs = 60_000) {
  const real = createApertiumTranslator({ apertiumPath, timeoutMs });
  const asked: string[][] = [];
  const translator: Translator = {
    name: real.name,
    pairs: () => real.pairs(),
    translate: (texts, pair) => {
      asked.push([...texts]);
      return real.translate(texts, pair);
    },
  };
  return { translator, asked };
}

/** A program in front of the real apertium: it lists the real pairs and version, and does `translation` instead of translating. */
function apertiumThat(name: string, translation: string) {
  const file = path.join(scratch, name);
  writeFileSync(file, `#!/bin/sh\ncase "$1" in -l|-V) exec apertium "$@";; esac\n${translation}\n`);
  chmodSync(file, 0o755);
  return file;
}

const apertium = countingApertium();
const api = await startTestApi({ db, url, temporal, translator: apertium.translator });

const editor = await createTestWorkspace(db, { scopes: ['calls.edit'] });
const viewer = await createTestWorkspace(db, { scopes: ['calls.view'] });
const stranger = await createTestWorkspace(db, { scopes: ['calls.edit'] });

const ENGLISH: Transcript = [
  {
    speaker: 'agent',
    text: 'Hello, I would like to confirm your order for two pairs of shoes. Is this a good time to talk?',
    offsetMs: 0,
  },
  { speaker: 'lead', text: 'Yes, thank you.', offsetMs: 4_100 },
  { speaker: 'agent', text: 'The red shoes will arrive tomorrow.', offsetMs: 6_300 },
];
const SPANISH: Transcript = [
  { speaker: 'agent', text: 'Hola, quiero confirmar su pedido de dos pares de zapatos.', offsetMs: 0 },
  { speaker: 'lead', text: 'Sí, muchas gracias.', offsetMs: 3_900 },
];

async function agentSpeaking(owner: TestWorkspace, language: string) {
  const voice = VOICES[0]!;
  return insertAgent(db, owner.workspaceId, { name: `Agent ${language}`, language, voiceId: voice.id });
}

/** An answered call of the workspace with `transcript` as the carrier path stores it (null: none). */
const insertCall = (owner: TestWorkspace, transcript: Transcript | null, agentId: string | null = null) =>
  insertAnsweredCall(db, owner, { agentId, transcript: transcript ?? undefined });

async function translate(callId: string, body: unknown, key = editor.key, through = api) {
  const response = await through.request('POST', `/calls/${callId}/transcript-translation`, { key, body });
  return { status: response.status, body: (await response.json()) as any };
}

const textsOf = (turns: Transcript) => turns.map((turn) => turn.text);
const storedFor = (callId: string) => db.callTranslation.findMany({ where: { callId } });

/** The pairs `apertium -l` lists from the installed data, each side's code canonicalised as BCP 47 (`spa` -> `es`, `eng_US` -> `en-US`). */
async function installedPairs() {
  const { stdout } = await execTestProcess('apertium', ['-l']);
  return stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((mode) => /^[a-z]{2,3}(_[A-Z]{2})?-[a-z]{2,3}(_[A-Z]{2})?$/.test(mode))
    .map((mode) => {
      const [from, to] = mode.split('-').map((side) => Intl.getCanonicalLocales(side.replace('_', '-'))[0]!);
      return { from, to };
    });
}

describe('POST /calls/{id}/transcript-translation', () => {
  it("translates an English transcript into Spanish turn for turn, with the agent's language as the source", async () => {
    const agent = await agentSpeaking(editor, 'en-US');
    const call = await insertCall(editor, ENGLISH, agent.id);
    const { status, body } = await translate(call.id, { language: 'es' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ callId: call.id, language: 'es', sourceLanguage: 'en' });
    expect(body.provider).toMatch(/^apertium \d+\.\d+\.\d+ eng-spa/);
    expect(body.turns.map(({ speaker, offsetMs }: any) => ({ speaker, offsetMs }))).toEqual(
      ENGLISH.map(({ speaker, offsetMs }) => ({ speaker, offsetMs })),
    );
    const [greeting, thanks, shoes] = textsOf(body.turns);
    expect(greeting).toMatch(/^Hola, /);
    expect(greeting).toMatch(/zapatos/);
    expect(greeting).not.toMatch(/shoes|Hello/);
    expect(thanks).toMatch(/gracias/i);
    expect(shoes).toMatch(/zapatos rojos/);
    // Unknown words carry no mark, and no turn is empty.
    for (const text of textsOf(body.turns)) expect(text).not.toMatch(/[*#@]|^$/);

    const [stored] = await storedFor(call.id);
    expect(stored).toMatchObject({ language: 'es', sourceLanguage: 'en', provider: body.provider, turns: body.turns });
    expect(stored!.createdAt.toISOString()).toBe(body.createdAt);
  });

  it('answers the stored translation on a second request without running the translator again', async () => {
    const call = await insertCall(editor, ENGLISH);
    const first = await translate(call.id, { language: 'es' });
    const runs = apertium.asked.length;
    const second = await translate(call.id, { language: 'es' });
    expect(second).toEqual(first);
    // A region apertium has no data of is the same Spanish: stored once, under the pair's language.
    const regional = await translate(call.id, { language: 'es-MX' });
    expect(regional).toEqual(first);
    expect(apertium.asked.length).toBe(runs);
    expect(await storedFor(call.id)).toHaveLength(1);
  });

  it('translates Spanish into English, the source from the agent or from the body', async () => {
    const agent = await agentSpeaking(editor, 'es');
    const byAgent = await translate((await insertCall(editor, SPANISH, agent.id)).id, { language: 'en' });
    const byBody = await translate((await insertCall(editor, SPANISH)).id, { language: 'en', sourceLanguage: 'ES' });
    for (const { status, body } of [byAgent, byBody]) {
      expect(status).toBe(200);
      expect(body).toMatchObject({ language: 'en', sourceLanguage: 'es' });
      expect(body.provider).toMatch(/^apertium \d+\.\d+\.\d+ spa-eng /);
      const [greeting, thanks] = textsOf(body.turns);
      expect(greeting).toMatch(/^Hello, /);
      expect(greeting).toMatch(/confirm/);
      expect(greeting).toMatch(/shoes/);
      expect(thanks).toMatch(/thank/i);
    }
    expect(textsOf(byBody.body.turns)).toEqual(textsOf(byAgent.body.turns));
  });

  it('refuses a pair no installed data translates with 422, naming the pairs there are, and stores nothing', async () => {
    const call = await insertCall(editor, ENGLISH);
    const runs = apertium.asked.length;
    const pairs = await installedPairs();
    expect(pairs).toEqual(
      expect.arrayContaining([
        { from: 'en', to: 'es' },
        { from: 'es', to: 'en' },
      ]),
    );
    for (const body of [{ language: 'fr' }, { language: 'en' }, { language: 'es', sourceLanguage: 'de' }]) {
      const refused = await translate(call.id, body);
      expect(refused.status).toBe(422);
      expect(refused.body).toEqual({ error: 'translation_pair_unsupported', detail: expect.any(String), pairs });
    }
    expect(apertium.asked.length).toBe(runs);
    expect(await storedFor(call.id)).toEqual([]);
  });

  it('refuses a call without a transcript with 409 call_has_no_transcript', async () => {
    for (const transcript of [null, []]) {
      const call = await insertCall(editor, transcript);
      expect(await translate(call.id, { language: 'es' })).toEqual({
        status: 409,
        body: { error: 'call_has_no_transcript' },
      });
      expect(await storedFor(call.id)).toEqual([]);
    }
  });

  it('answers 500 internal_error, not a 4xx, for a stored transcript of another shape (a fault of ours)', async () => {
    const call = await insertAnsweredCall(db, editor, { transcript: [{ speaker: 'robot', words: 'Hi' }] });
    expect(await translate(call.id, { language: 'es' })).toEqual({ status: 500, body: { error: 'internal_error' } });
    expect(await storedFor(call.id)).toEqual([]);
  });

  it('refuses bodies that are not a target language with 400 invalid_body', async () => {
    const call = await insertCall(editor, ENGLISH);
    for (const body of [
      {},
      { language: 'not a tag' },
      { language: 'es', extra: 1 },
      { language: 'es', sourceLanguage: 7 },
    ]) {
      const refused = await translate(call.id, body);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_body');
    }
    expect(await storedFor(call.id)).toEqual([]);
  });

  it('needs calls.edit of a key (calls.view is not enough)', async () => {
    const call = await insertCall(viewer, ENGLISH);
    expect(await translate(call.id, { language: 'es' }, viewer.key)).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'calls.edit' },
    });
    expect(await storedFor(call.id)).toEqual([]);
  });

  it("refuses another workspace's call, an unknown id and a non-UUID id alike with 403", async () => {
    const call = await insertCall(editor, ENGLISH);
    for (const id of [call.id, randomUUID(), 'not-a-uuid'])
      expect(await translate(id, { language: 'es' }, stranger.key)).toEqual({
        status: 403,
        body: { error: 'forbidden' },
      });
    expect(await storedFor(call.id)).toEqual([]);
  });
});

describe('POST /calls/{id}/transcript-translation when the translator fails', () => {
  const failing = async (apertiumPath: string, timeoutMs = 20_000) =>
    startTestApi({ db, url, temporal, translator: createApertiumTranslator({ apertiumPath, timeoutMs }) });

  it('answers 502 provider_error with upstreamStatus 503 (cannot run), 504 (too slow), 500 (failed); nothing stored', async () => {
    const cases: Array<[string, number, number?]> = [
      [path.join(scratch, 'no-such-apertium'), 503],
      [apertiumThat('slow-apertium', 'exec sleep 30'), 504, 500],
      [apertiumThat('broken-apertium', 'echo "broken data" >&2; exit 3'), 500],
      [apertiumThat('silent-apertium', 'exit 0'), 500],
    ];
    for (const [program, upstreamStatus, timeoutMs] of cases) {
      const through = await failing(program, timeoutMs);
      const call = await insertCall(editor, ENGLISH);
      expect(await translate(call.id, { language: 'es' }, editor.key, through)).toEqual({
        status: 502,
        body: { error: 'provider_error', upstreamStatus },
      });
      expect(await storedFor(call.id)).toEqual([]);
    }
  });
});

describe('the apertium translator', () => {
  it('keeps turns apart, and empty turns empty, whatever their own line breaks', async () => {
    const { translator } = countingApertium();
    const texts = ['the red', '', 'house is big\n\nand old', '   '];
    expect(await translator.translate(texts, { from: 'en', to: 'es' })).toEqual([
      'El rojo',
      '',
      'La casa es grande y vieja',
      '',
    ]);
  });

  it('translates turn by turn when the paragraphs of one run do not come back one for one', async () => {
    // Blank lines squeezed out: one run answers the whole transcript as one paragraph.
    const squeezing = apertiumThat('squeezing-apertium', `apertium "$@" | tr -s '\\n'`);
    const squeezed = createApertiumTranslator({ apertiumPath: squeezing, timeoutMs: 60_000 });
    const real = createApertiumTranslator({ apertiumPath: 'apertium', timeoutMs: 60_000 });
    const pair = { from: 'en', to: 'es' };
    const texts = textsOf(ENGLISH);
    const expected = await real.translate(texts, pair);
    expect(expected).toHaveLength(texts.length);
    expect(await squeezed.translate(texts, pair)).toEqual(expected);
  });

  it('names the engine, the mode and the data package in each pair, read from the installed data', async () => {
    const pairs = await createApertiumTranslator({ apertiumPath: 'apertium', timeoutMs: 60_000 }).pairs();
    expect(pairs.map(({ from, to }) => ({ from, to }))).toEqual(await installedPairs());
    const { stdout: version } = await execTestProcess('apertium', ['-V']);
    const engine = `apertium ${version.trim().replace(/^apertium /i, '')}`;
    expect(pairs.find((pair) => pair.from === 'en' && pair.to === 'es')?.provider).toMatch(
      new RegExp(`^${engine.replace(/\./g, '\\.')} eng-spa \\(apertium-eng-spa \\S+\\)$`),
    );
  });
});
