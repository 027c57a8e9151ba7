import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { DICTIONARY_LIMITS, normaliseTerms } from '../../lib/dictionaries/dictionary-terms';
import { ErrorCode } from '../../lib/error-codes';
import { defineRoute } from '../http/route';
import {
  createDictionary,
  deleteDictionary,
  dictionaryView,
  findOwnedDictionary,
  listDictionaries,
  updateDictionary,
} from './dictionaries';

const { termsPerDictionary, termLength, totalCharacters, nameLength, descriptionLength, externalIdLength } =
  DICTIONARY_LIMITS;

/** The stored list, made by lib/dictionaries/dictionary-terms.ts; a term it refuses is an issue at its index, and nothing is stored. */
const termsSchema = z
  .array(z.string())
  .max(termsPerDictionary)
  .transform((raw, context) => {
    const { terms, problems } = normaliseTerms(raw);
    for (const { index, message } of problems)
      context.addIssue({ code: 'custom', path: index === undefined ? [] : [index], message, input: raw });
    return terms;
  })
  .describe(
    `Words and phrases, at most ${termsPerDictionary}. Each is stored in Unicode NFC with every run of whitespace made one space and trimmed; ` +
      `a term empty once trimmed, with a control character, or longer than ${termLength} characters (code points) is refused. ` +
      'Duplicates (exact and case-sensitive, after that) are removed, the first occurrence keeping its place. ' +
      `All terms together at most ${totalCharacters} characters (charCount). Replaces the whole list.`,
  );

const dictionarySettings = {
  name: z
    .string()
    .trim()
    .min(1)
    .check(atMostCodePoints(nameLength))
    .describe(`Trimmed, 1 to ${nameLength} characters; need not be unique.`),
  description: z
    .string()
    .trim()
    .check(atMostCodePoints(descriptionLength))
    .describe(`Trimmed, at most ${descriptionLength} characters; "" (the default) for none.`),
  terms: termsSchema,
  externalId: z
    .string()
    .min(1)
    .check(atMostCodePoints(externalIdLength))
    .nullable()
    .describe(
      `The caller's own id for this dictionary, 1 to ${externalIdLength} characters, kept exactly as given; unique in the workspace ` +
        '(409 external_id_taken). null (the default): none.',
    ),
};

const dictionarySchema = z.object({
  id: z.string().uuid(),
  name: z.string(),
  description: z.string().describe('"" when none was given.'),
  terms: z.array(z.string()).describe('Normalised and deduplicated, in the order given.'),
  charCount: z
    .number()
    .int()
    .describe(
      "Computed by the service: the sum of the terms' lengths in Unicode code points (separators not counted).",
    ),
  externalId: z.string().nullable().describe('null when the dictionary has none.'),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const newDictionarySchema = z
  .strictObject(dictionarySettings)
  .partial({ description: true, terms: true, externalId: true });

const dictionaryUpdateSchema = z
  .strictObject(dictionarySettings)
  .partial()
  .refine((update) => Object.keys(update).length > 0, { message: 'give at least one field to change' });

const dictionaryParams = z.object({ id: z.string() });
const tags = ['Dictionaries'];

export const dictionaryRoutes = [
  defineRoute({
    method: 'get',
    path: '/dictionaries',
    access: { permission: 'dictionaries.view' },
    summary: "The workspace's dictionaries, all at once (unpaginated), newest first.",
    tags,
    responses: { 200: { description: 'Every dictionary of the workspace.', schema: z.array(dictionarySchema) } },
    handler: async ({ services, principal }) => ({
      status: 200,
      body: (await listDictionaries(services, principal)).map(dictionaryView),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/dictionaries',
    access: { permission: 'dictionaries.edit' },
    summary: `Create a dictionary. A workspace holds at most ${DICTIONARY_LIMITS.dictionariesPerWorkspace} (409 dictionary_limit_reached).`,
    tags,
    body: newDictionarySchema,
    responses: { 201: { description: 'Created.', schema: dictionarySchema } },
    errors: { 409: [ErrorCode.external_id_taken, ErrorCode.dictionary_limit_reached] },
    handler: async ({ services, principal, body }) => ({
      status: 201,
      body: dictionaryView(await createDictionary(services, principal, body)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/dictionaries/{id}',
    access: { permission: 'dictionaries.view' },
    summary: 'Read one dictionary (spec 4.11).',
    tags,
    params: dictionaryParams,
    responses: { 200: { description: 'The dictionary.', schema: dictionarySchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: dictionaryView(await findOwnedDictionary(services, principal, params.id)),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/dictionaries/{id}',
    access: { permission: 'dictionaries.edit' },
    summary:
      'Change some fields of a dictionary; terms, when given, replace the whole list. Agents using it use the new terms at once.',
    tags,
    params: dictionaryParams,
    body: dictionaryUpdateSchema,
    responses: { 200: { description: 'The dictionary.', schema: dictionarySchema } },
    errors: { 409: [ErrorCode.external_id_taken] },
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: dictionaryView(await updateDictionary(services, principal, params.id, body)),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/dictionaries/{id}',
    access: { permission: 'dictionaries.delete' },
    summary: 'Delete a dictionary for good: every agent using it stops using it at once.',
    tags,
    params: dictionaryParams,
    responses: { 204: { description: 'Deleted.' } },
    handler: async ({ services, principal, params }) => {
      await deleteDictionary(services, principal, params.id);
      return { status: 204 };
    },
  }),
];
