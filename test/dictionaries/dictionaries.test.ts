import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DICTIONARY_LIMITS } from '../../lib/dictionaries/dictionary-terms';
import { pronunciationsOf, spokenPiecesOf, spokenTextOf, ssmlOf } from '../../lib/dictionaries/pronunciations';
import { speechHints } from '../../lib/conversation/script-walk';
import { startTestApi } from '../support/api';
import { useTestDatabase } from '../support/database';
import { useTemporalClient } from '../support/temporal';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const ALL_SCOPES = ['dictionaries.edit', 'dictionaries.delete'];
const owner = await createTestWorkspace(db, { scopes: ALL_SCOPES });
const other = await createTestWorkspace(db, { scopes: ALL_SCOPES });
const viewer = await createTestWorkspace(db, { scopes: ['dictionaries.view'] });

interface DictionaryBody {
  id: string;
  name: string;
  description: string;
  terms: string[];
  charCount: number;
  externalId: string | null;
  createdAt: string;
  updatedAt: string;
}
interface ErrorBody {
  error: string;
  issues?: Array<{ path: string[]; message: string }>;
  requiredPermission?: string;
}

async function call<T = DictionaryBody>(method: string, path: string, body?: unknown, who: TestWorkspace = owner) {
  const response = await api.request(method, path, { key: who.key, body });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}
const create = (body: unknown, who?: TestWorkspace) => call('POST', '/dictionaries', body, who);
const read = (id: string, who?: TestWorkspace) => call('GET', `/dictionaries/${id}`, undefined, who);

async function created(body: Record<string, unknown>, who?: TestWorkspace) {
  const response = await create(body, who);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

/** n distinct terms of exactly `length` characters. */
const termsOf = (n: number, length: number) =>
  Array.from({ length: n }, (_, i) => `t${i}`.padEnd(length, 'x').slice(0, length));

describe('dictionaries: create, read, list, change, delete', () => {
  it('creates with documented defaults and answers exactly the spec object', async () => {
    const minimal = await created({ name: '  Brands  ' });
    expect(Object.keys(minimal).sort()).toEqual(
      ['charCount', 'createdAt', 'description', 'externalId', 'id', 'name', 'terms', 'updatedAt'].sort(),
    );
    expect(minimal).toMatchObject({ name: 'Brands', description: '', terms: [], charCount: 0, externalId: null });
    const read1 = await read(minimal.id);
    expect(read1.status).toBe(200);
    expect(read1.body).toEqual(minimal);

    const full = await created({
      name: 'Medicines',
      description: 'Drug names',
      terms: ['Ibuprofen', 'Paracetamol'],
      externalId: 'crm-list-7',
    });
    expect(full).toMatchObject({
      description: 'Drug names',
      terms: ['Ibuprofen', 'Paracetamol'],
      charCount: 20,
      externalId: 'crm-list-7',
    });
    const stored = await db.dictionary.findUniqueOrThrow({ where: { id: full.id } });
    expect(stored).toMatchObject({ workspaceId: owner.workspaceId, charCount: 20, externalId: 'crm-list-7' });
  });

  it('lists every dictionary of the workspace at once, newest first, and none of another workspace', async () => {
    const mine = await created({ name: 'Listed' });
    const theirs = await created({ name: 'Theirs' }, other);
    const list = await call<DictionaryBody[]>('GET', '/dictionaries');
    expect(list.status).toBe(200);
    expect(list.body[0]).toEqual(mine);
    expect(list.body.map((dictionary) => dictionary.id)).not.toContain(theirs.id);
    expect(list.body).toHaveLength(await db.dictionary.count({ where: { workspaceId: owner.workspaceId } }));
    const createdAts = list.body.map((dictionary) => dictionary.createdAt);
    expect([...createdAts].sort().reverse()).toEqual(createdAts);
  });

  it('changes only the fields given; terms replace the list; null clears externalId', async () => {
    const original = await created({ name: 'Cities', description: 'Places', terms: ['Paris'], externalId: 'c-1' });
    const renamed = await call('PATCH', `/dictionaries/${original.id}`, { name: 'Towns' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      id: original.id,
      name: 'Towns',
      description: 'Places',
      terms: ['Paris'],
      charCount: 5,
      externalId: 'c-1',
      createdAt: original.createdAt,
    });
    expect(Date.parse(renamed.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(original.updatedAt));
    const replaced = await call('PATCH', `/dictionaries/${original.id}`, {
      terms: ['Lyon', 'Nice'],
      externalId: null,
      description: '',
    });
    expect(replaced.body).toMatchObject({ name: 'Towns', description: '', terms: ['Lyon', 'Nice'], charCount: 8 });
    expect(replaced.body.externalId).toBeNull();
    expect((await read(original.id)).body).toEqual(replaced.body);
  });

  it('deletes for good: 204, then the id is forbidden like any unknown id', async () => {
    const doomed = await created({ name: 'Doomed', terms: ['gone'] });
    expect((await call('DELETE', `/dictionaries/${doomed.id}`)).status).toBe(204);
    expect(await db.dictionary.findUnique({ where: { id: doomed.id } })).toBeNull();
    for (const method of ['GET', 'DELETE']) {
      const again = await call<ErrorBody>(method, `/dictionaries/${doomed.id}`);
      expect(again).toEqual({ status: 403, body: { error: 'forbidden' } });
    }
    const patch = await call<ErrorBody>('PATCH', `/dictionaries/${doomed.id}`, { name: 'Back' });
    expect(patch).toEqual({ status: 403, body: { error: 'forbidden' } });
  });

  it('deleting a dictionary removes it from every agent at once, leaving the agents and their other dictionaries', async () => {
    const doomed = await created({ name: 'In use' });
    const kept = await created({ name: 'Also in use' });
    const agentOf = () =>
      db.agent.create({
        data: {
          workspaceId: owner.workspaceId,
          name: 'Agent',
          language: 'en-US',
          voiceId: 'espeak-ng/en-us',
          script: { openingLine: 'Hi', questions: [], closing: 'Bye' },
        },
      });
    const [first, second] = [await agentOf(), await agentOf()];
    await db.agentDictionary.createMany({
      data: [
        { agentId: first.id, dictionaryId: doomed.id, position: 0 },
        { agentId: first.id, dictionaryId: kept.id, position: 1 },
        { agentId: second.id, dictionaryId: doomed.id, position: 0 },
      ],
    });
    expect((await call('DELETE', `/dictionaries/${doomed.id}`)).status).toBe(204);
    expect(await db.agentDictionary.count({ where: { dictionaryId: doomed.id } })).toBe(0);
    expect(await db.agentDictionary.findMany({ where: { agentId: { in: [first.id, second.id] } } })).toEqual([
      { agentId: first.id, dictionaryId: kept.id, position: 1 },
    ]);
    expect(await db.agent.count({ where: { id: { in: [first.id, second.id] } } })).toBe(2);
  });
});

describe('dictionaries: terms', () => {
  it('normalises terms, removes duplicates keeping the first in place, and counts code points', async () => {
    const dictionary = await created({
      name: 'Normalised',
      terms: [
        '  Acme   Corp ',
        'Acme Corp',
        'acme corp',
        'Cafe\u0301', // e + combining acute: NFC makes it é, the same term as the next one
        'Caf\u00e9',
        'na\u00efve\tword\nhere\u00a0too',
        '\u{1F600} smile', // one code point, two UTF-16 units
        'Acme Corp',
      ],
    });
    expect(dictionary.terms).toEqual([
      'Acme Corp',
      'acme corp',
      'Caf\u00e9',
      'na\u00efve word here too',
      '\u{1F600} smile',
    ]);
    // 9 + 9 + 4 + 19 + 7
    expect(dictionary.charCount).toBe(48);
    expect((await db.dictionary.findUniqueOrThrow({ where: { id: dictionary.id } })).charCount).toBe(48);
  });

  it('stores a pronunciation as `written => spoken`, counts it whole, and refuses one side empty or two arrows', async () => {
    const dictionary = await created({ name: 'Said', terms: ['NASA=>nasa', '  SQL   =>  sequel ', 'Acme'] });
    expect(dictionary.terms).toEqual(['NASA => nasa', 'SQL => sequel', 'Acme']);
    expect(dictionary.charCount).toBe(12 + 13 + 4); // the arrow and its spaces count: the stored string's length
    for (const [term, message] of [
      ['=> nasa', 'nothing written before'],
      ['NASA =>', 'nothing to say after'],
      ['a => b => c', 'more than once'],
    ] as const) {
      const refused = await create({ name: 'Bad', terms: ['ok', term] });
      expect(refused.status).toBe(400);
      expect((refused.body as unknown as ErrorBody).issues).toEqual([
        expect.objectContaining({ path: ['terms', '1'], message: expect.stringContaining(message) }),
      ]);
    }
  });

  it('finds written forms as whole tokens, case-sensitively, longest first, and renders SSML or text', () => {
    const said = pronunciationsOf(['US => you ess', 'New York => noo york', 'New => knew', 'R&D => R and D', 'hint']);
    const pieces = spokenPiecesOf('New  York: US, us, USA and R&D. New!', said);
    expect(pieces).toEqual([
      { written: 'New  York', spoken: 'noo york' },
      { text: ': ' },
      { written: 'US', spoken: 'you ess' },
      { text: ', us, USA and ' },
      { written: 'R&D', spoken: 'R and D' },
      { text: '. ' },
      { written: 'New', spoken: 'knew' },
      { text: '!' },
    ]);
    expect(spokenTextOf(pieces)).toBe('noo york: you ess, us, USA and R and D. knew!');
    expect(ssmlOf(spokenPiecesOf('R&D <now>', said))).toBe('<sub alias="R and D">R&amp;D</sub> &lt;now&gt;');
    expect(spokenPiecesOf('nothing here', pronunciationsOf(['hint']))).toEqual([{ text: 'nothing here' }]);
    expect(speechHints(['US => you ess', 'a, b', 'US'], 10)).toEqual(['US', 'a b']);
  });

  it('recomputes charCount when the terms change, and keeps it when they do not', async () => {
    const dictionary = await created({ name: 'Counted', terms: ['abc'] });
    expect(dictionary.charCount).toBe(3);
    const longer = await call('PATCH', `/dictionaries/${dictionary.id}`, { terms: ['abc', 'défg', ' abc '] });
    expect(longer.body).toMatchObject({ terms: ['abc', 'défg'], charCount: 7 });
    const renamed = await call('PATCH', `/dictionaries/${dictionary.id}`, { name: 'Renamed' });
    expect(renamed.body).toMatchObject({ terms: ['abc', 'défg'], charCount: 7 });
    const emptied = await call('PATCH', `/dictionaries/${dictionary.id}`, { terms: [] });
    expect(emptied.body).toMatchObject({ terms: [], charCount: 0 });
  });

  it('accepts every limit exactly', async () => {
    const { termsPerDictionary, termLength, totalCharacters, nameLength, descriptionLength, externalIdLength } =
      DICTIONARY_LIMITS;
    const atTotal = await created({
      name: 'n'.repeat(nameLength),
      description: 'd'.repeat(descriptionLength),
      externalId: 'e'.repeat(externalIdLength),
      terms: termsOf(totalCharacters / termLength, termLength),
    });
    expect(atTotal.charCount).toBe(totalCharacters);
    const atCount = await created({ name: 'Many', terms: termsOf(termsPerDictionary, 5) });
    expect(atCount.terms).toHaveLength(termsPerDictionary);
    // Length is in code points: 100 emoji are 200 UTF-16 units.
    const wide = await created({ name: 'Wide', terms: ['\u{1F600}'.repeat(termLength)] });
    expect(wide.charCount).toBe(termLength);
    // Length is counted once normalised: whitespace around a term does not count.
    const padded = await created({ name: 'Padded', terms: [` \t${'y'.repeat(termLength)}\n `] });
    expect(padded.terms).toEqual(['y'.repeat(termLength)]);
  });
});

describe('dictionaries: bad input is refused with invalid_body and changes nothing', () => {
  const { termsPerDictionary, termLength, totalCharacters, nameLength, descriptionLength, externalIdLength } =
    DICTIONARY_LIMITS;
  const BAD: Array<[string, Record<string, unknown>, string[]]> = [
    ['empty name', { name: '' }, ['name']],
    ['blank name', { name: '   ' }, ['name']],
    ['long name', { name: 'n'.repeat(nameLength + 1) }, ['name']],
    ['long description', { description: 'd'.repeat(descriptionLength + 1) }, ['description']],
    ['empty externalId', { externalId: '' }, ['externalId']],
    ['long externalId', { externalId: 'e'.repeat(externalIdLength + 1) }, ['externalId']],
    ['numeric externalId', { externalId: 7 }, ['externalId']],
    ['too many terms', { terms: termsOf(termsPerDictionary + 1, 3) }, ['terms']],
    ['a blank term', { terms: ['ok', '  \t '] }, ['terms', '1']],
    ['an empty term', { terms: [''] }, ['terms', '0']],
    ['a control character', { terms: ['ok', 'bell\u0007'] }, ['terms', '1']],
    ['a long term', { terms: ['x'.repeat(termLength + 1)] }, ['terms', '0']],
    ['too many characters', { terms: termsOf(totalCharacters / termLength + 1, termLength) }, ['terms']],
    ['terms not an array', { terms: 'one, two' }, ['terms']],
    ['a term not a string', { terms: ['one', 2] }, ['terms', '1']],
    ['null description', { description: null }, ['description']],
    ['a computed field', { charCount: 3 }, []],
    ['an id', { id: randomUUID() }, []],
  ];

  it.each(BAD)('POST with %s', async (_label, fields, path) => {
    const before = await db.dictionary.count();
    const response = await create({ name: 'Refused', ...fields });
    expect(response.status).toBe(400);
    const body = response.body as unknown as ErrorBody;
    expect(body.error).toBe('invalid_body');
    expect(body.issues!.map((issue) => issue.path)).toContainEqual(path);
    expect(await db.dictionary.count()).toBe(before);
  });

  it.each(BAD)('PATCH with %s', async (_label, fields, path) => {
    const dictionary = await created({ name: 'Unchanged', terms: ['keep'], externalId: `keep-${randomUUID()}` });
    const response = await call<ErrorBody>('PATCH', `/dictionaries/${dictionary.id}`, fields);
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_body');
    expect(response.body.issues!.map((issue) => issue.path)).toContainEqual(path);
    expect((await read(dictionary.id)).body).toEqual(dictionary);
  });

  it('refuses a PATCH that changes nothing, and a body missing name on POST', async () => {
    const dictionary = await created({ name: 'Still' });
    const empty = await call<ErrorBody>('PATCH', `/dictionaries/${dictionary.id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('invalid_body');
    const nameless = await call<ErrorBody>('POST', '/dictionaries', { terms: ['x'] });
    expect(nameless.status).toBe(400);
    expect(nameless.body.issues!.map((issue) => issue.path)).toContainEqual(['name']);
    expect((await read(dictionary.id)).body).toEqual(dictionary);
  });
});

describe('dictionaries: externalId is unique per workspace', () => {
  it('refuses a second dictionary with the same externalId, on POST and PATCH, with 409 external_id_taken', async () => {
    const holder = await created({ name: 'Holder', externalId: 'crm-1' });
    const before = await db.dictionary.count();
    const second = await create({ name: 'Second', externalId: 'crm-1' });
    expect(second.status).toBe(409);
    expect((second.body as unknown as ErrorBody).error).toBe('external_id_taken');
    expect(await db.dictionary.count()).toBe(before);

    const other1 = await created({ name: 'Other', externalId: 'crm-2' });
    const patched = await call<ErrorBody>('PATCH', `/dictionaries/${other1.id}`, { externalId: 'crm-1', name: 'X' });
    expect(patched.status).toBe(409);
    expect(patched.body.error).toBe('external_id_taken');
    expect((await read(other1.id)).body).toEqual(other1);

    // Its own externalId again is no conflict; another case is another id; freeing it lets another take it.
    expect((await call('PATCH', `/dictionaries/${holder.id}`, { externalId: 'crm-1' })).status).toBe(200);
    expect((await create({ name: 'Case', externalId: 'CRM-1' })).status).toBe(201);
    await call('PATCH', `/dictionaries/${holder.id}`, { externalId: null });
    expect((await call('PATCH', `/dictionaries/${other1.id}`, { externalId: 'crm-1' })).body.externalId).toBe('crm-1');
  });

  it('lets another workspace use the same externalId, and many dictionaries have none', async () => {
    await created({ name: 'Mine', externalId: 'shared-id' });
    const theirs = await created({ name: 'Theirs', externalId: 'shared-id' }, other);
    expect(theirs.externalId).toBe('shared-id');
    expect((await created({ name: 'No id 1' })).externalId).toBeNull();
    expect((await created({ name: 'No id 2', externalId: null })).externalId).toBeNull();
  });

  it('gives one of two concurrent creates the externalId and the other 409', async () => {
    for (let round = 0; round < 5; round++) {
      const externalId = `race-${round}`;
      const results = await Promise.all([
        create({ name: 'A', externalId }),
        create({ name: 'B', externalId }),
        create({ name: 'C', externalId }),
      ]);
      expect(results.map((result) => result.status).sort()).toEqual([201, 409, 409]);
      expect(await db.dictionary.count({ where: { workspaceId: owner.workspaceId, externalId } })).toBe(1);
    }
  });

  it('gives one of two concurrent changes the externalId and the other 409', async () => {
    const [a, b] = [await created({ name: 'A' }), await created({ name: 'B' })];
    const results = await Promise.all(
      [a, b].map((dictionary) => call('PATCH', `/dictionaries/${dictionary.id}`, { externalId: 'race-patch' })),
    );
    expect(results.map((result) => result.status).sort()).toEqual([200, 409]);
    expect(await db.dictionary.count({ where: { externalId: 'race-patch' } })).toBe(1);
  });
});

describe('dictionaries: a workspace holds at most its limit', () => {
  const limit = DICTIONARY_LIMITS.dictionariesPerWorkspace;
  const fill = (workspaceId: string, n: number) =>
    db.dictionary.createMany({ data: Array.from({ length: n }, (_, i) => ({ workspaceId, name: `Filler ${i}` })) });

  it('refuses one more with 409 dictionary_limit_reached; deleting one makes room', async () => {
    const full = await createTestWorkspace(db, { scopes: ALL_SCOPES });
    await fill(full.workspaceId, limit - 1);
    const last = await created({ name: 'Last' }, full);
    const over = await create({ name: 'Over' }, full);
    expect(over.status).toBe(409);
    expect((over.body as unknown as ErrorBody).error).toBe('dictionary_limit_reached');
    expect(await db.dictionary.count({ where: { workspaceId: full.workspaceId } })).toBe(limit);
    // Another workspace is not affected.
    expect((await create({ name: 'Elsewhere' }, other)).status).toBe(201);
    expect((await call('DELETE', `/dictionaries/${last.id}`, undefined, full)).status).toBe(204);
    expect((await create({ name: 'Room again' }, full)).status).toBe(201);
  });

  it('lets concurrent creates pass the limit no further', async () => {
    const racing = await createTestWorkspace(db, { scopes: ALL_SCOPES });
    await fill(racing.workspaceId, limit - 2);
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => create({ name: `Race ${i}` }, racing)));
    expect(results.map((result) => result.status).sort()).toEqual([201, 201, 409, 409, 409]);
    expect(await db.dictionary.count({ where: { workspaceId: racing.workspaceId } })).toBe(limit);
  });
});

describe('dictionaries: workspaces and scopes', () => {
  it("answers another workspace's dictionary exactly like an unknown or malformed id, and leaves it alone", async () => {
    const secret = await created({ name: 'Secret', terms: ['classified'], externalId: 'secret-1' });
    for (const id of [secret.id, randomUUID(), 'not-a-uuid']) {
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { name: 'Stolen' }],
        ['DELETE', undefined],
      ] as const) {
        const response = await call<ErrorBody>(method, `/dictionaries/${id}`, body, other);
        expect(response, `${method} ${id}`).toEqual({ status: 403, body: { error: 'forbidden' } });
      }
    }
    expect((await read(secret.id)).body).toEqual(secret);
    const theirList = await call<DictionaryBody[]>('GET', '/dictionaries', undefined, other);
    expect(JSON.stringify(theirList.body)).not.toContain('classified');
  });

  it('needs dictionaries.view to read, dictionaries.edit to write, dictionaries.delete to delete', async () => {
    const dictionary = await created({ name: 'Scoped' });
    // A viewer reads (its own workspace's list); writing needs more.
    expect((await call('GET', '/dictionaries', undefined, viewer)).status).toBe(200);
    const refusedCreate = await call<ErrorBody>('POST', '/dictionaries', { name: 'No' }, viewer);
    expect(refusedCreate).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'dictionaries.edit' },
    });
    const editorOnly = await createTestWorkspace(db, { scopes: ['dictionaries.edit'] });
    const own = await created({ name: 'Editor' }, editorOnly);
    expect((await read(own.id, editorOnly)).status).toBe(200);
    const refusedDelete = await call<ErrorBody>('DELETE', `/dictionaries/${own.id}`, undefined, editorOnly);
    expect(refusedDelete).toEqual({
      status: 403,
      body: { error: 'forbidden', requiredPermission: 'dictionaries.delete' },
    });
    expect(await db.dictionary.count({ where: { id: { in: [dictionary.id, own.id] } } })).toBe(2);
  });
});
