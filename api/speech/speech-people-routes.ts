import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { ErrorCode } from '../../lib/error-codes';
import { scorecardSchema } from '../../lib/speech/scorecard';
import { defineRoute } from '../http/route';
import { offsetQuery } from '../http/pagination';
import {
  createSpeechRep,
  createSpeechTeam,
  deleteSpeechRep,
  deleteSpeechTeam,
  findOwnedSpeechRep,
  findOwnedSpeechTeam,
  listSpeechReps,
  listSpeechTeams,
  readScorecard,
  renameSpeechTeam,
  replaceScorecard,
  SPEECH_TEAMS_PER_WORKSPACE,
  speechRepView,
  speechTeamView,
  updateSpeechRep,
} from './speech-people';

/**
 * The schema with every object in it strict (an unknown key is an issue, not silently dropped), keeping
 * its defaults (prefaults) and refinements: lib/speech/scorecard.ts's objects strip unknown keys, which would store
 * a misspelt weight as the default without a word.
 */
function strictly<T extends z.ZodType>(schema: T): T {
  if (schema instanceof z.ZodObject) {
    const shape = Object.fromEntries(
      Object.entries(schema.shape).map(([key, value]) => [key, strictly(value as z.ZodType)]),
    );
    return schema.clone({ ...schema._zod.def, shape, catchall: z.never() }) as unknown as T;
  }
  if (schema instanceof z.ZodPrefault) {
    const def = schema._zod.def;
    return schema.clone({ ...def, innerType: strictly(def.innerType as z.ZodType) }) as unknown as T;
  }
  return schema;
}

/**
 * An email address as a pattern, not zod's email format: the OpenAPI description states this exact
 * pattern, so what a client validates and what the route accepts are one rule (HTML's valid e-mail
 * address, with at least one dot in the domain).
 */
const EMAIL_ADDRESS =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

const teamName = z
  .string()
  .trim()
  .min(1)
  .check(atMostCodePoints(100))
  .describe('Trimmed, 1 to 100 characters; unique in the workspace.');
const teamBody = z.strictObject({ name: teamName });
const teamSchema = z.object({
  id: z.string().uuid(),
  name: z.string(),
  repCount: z.number().int().describe('How many reps are in the team now.'),
  createdAt: z.string(),
});

const repSettings = {
  name: z
    .string()
    .trim()
    .min(1)
    .check(atMostCodePoints(200))
    .describe('Trimmed, 1 to 200 characters; need not be unique.'),
  email: z
    .string()
    .check(atMostCodePoints(254))
    .regex(EMAIL_ADDRESS, 'a valid email address')
    .nullable()
    .describe(
      'An email address (the WHATWG form of HTML, with a dot in the domain: no label starting or ending with a hyphen), kept as given; null (the default): none.',
    ),
  teamId: z
    .string()
    .uuid()
    .nullable()
    .describe('A team of this workspace (else 400 invalid_body at teamId); null (the default): no team.'),
};
const newRepSchema = z.strictObject(repSettings).partial({ email: true, teamId: true });
const repUpdateSchema = z
  .strictObject(repSettings)
  .partial()
  .refine((update) => Object.keys(update).length > 0, { message: 'give at least one field to change' });
const repSchema = z.object({
  id: z.string().uuid(),
  name: z.string(),
  email: z.string().nullable(),
  teamId: z.string().uuid().nullable().describe('null: in no team (never put in one, or its team was deleted).'),
  createdAt: z.string(),
});

const scorecardBody = strictly(scorecardSchema);
const scorecardAnswer = scorecardSchema.extend({
  updatedAt: z.string().nullable().describe('When it was last PUT; null: never, these are the defaults.'),
});

const idParams = z.object({ id: z.string() });
const tags = ['Speech analysis'];

const teamRoutes = [
  defineRoute({
    method: 'get',
    path: '/speech/teams',
    access: { permission: 'speech.view' },
    summary: `The workspace's sales teams, all at once (unpaginated: a workspace holds at most ${SPEECH_TEAMS_PER_WORKSPACE}), oldest first.`,
    tags,
    responses: { 200: { description: 'Every team of the workspace.', schema: z.array(teamSchema) } },
    handler: async ({ services, principal }) => ({
      status: 200,
      body: (await listSpeechTeams(services, principal)).map(speechTeamView),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/speech/teams',
    access: { permission: 'speech.edit' },
    summary: `Create a team. Its name is unique in the workspace (409 speech_team_name_taken); a workspace holds at most ${SPEECH_TEAMS_PER_WORKSPACE} (409 speech_team_limit_reached).`,
    tags,
    body: teamBody,
    responses: { 201: { description: 'Created.', schema: teamSchema } },
    errors: { 409: [ErrorCode.speech_team_name_taken, ErrorCode.speech_team_limit_reached] },
    handler: async ({ services, principal, body }) => ({
      status: 201,
      body: speechTeamView(await createSpeechTeam(services, principal, body.name)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/speech/teams/{id}',
    access: { permission: 'speech.view' },
    summary: 'Read one team.',
    tags,
    params: idParams,
    responses: { 200: { description: 'The team.', schema: teamSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: speechTeamView(await findOwnedSpeechTeam(services, principal, params.id)),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/speech/teams/{id}',
    access: { permission: 'speech.edit' },
    summary: 'Rename a team (409 speech_team_name_taken when another team of the workspace has the name).',
    tags,
    params: idParams,
    body: teamBody,
    responses: { 200: { description: 'The team.', schema: teamSchema } },
    errors: { 409: [ErrorCode.speech_team_name_taken] },
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: speechTeamView(await renameSpeechTeam(services, principal, params.id, body.name)),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/speech/teams/{id}',
    access: { permission: 'speech.delete' },
    summary: 'Delete a team for good. Its reps stay, in no team (teamId null).',
    tags,
    params: idParams,
    responses: { 204: { description: 'Deleted.' } },
    handler: async ({ services, principal, params }) => {
      await deleteSpeechTeam(services, principal, params.id);
      return { status: 204 };
    },
  }),
];

const repRoutes = [
  defineRoute({
    method: 'get',
    path: '/speech/reps',
    access: { permission: 'speech.view' },
    summary:
      "The workspace's sales reps, newest first: offset pagination (limit default 50, max 200, offset) with total; teamId keeps one team's.",
    tags,
    query: z.object({ ...offsetQuery, teamId: z.string().uuid().optional() }),
    responses: {
      200: { description: 'A page.', schema: z.object({ items: z.array(repSchema), total: z.number().int() }) },
    },
    handler: async ({ services, principal, query }) => ({
      status: 200,
      body: await listSpeechReps(services, principal, query),
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/speech/reps',
    access: { permission: 'speech.edit' },
    summary: 'Create a rep, optionally in a team of the workspace.',
    tags,
    body: newRepSchema,
    responses: { 201: { description: 'Created.', schema: repSchema } },
    handler: async ({ services, principal, body }) => ({
      status: 201,
      body: speechRepView(await createSpeechRep(services, principal, body)),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/speech/reps/{id}',
    access: { permission: 'speech.view' },
    summary: 'Read one rep.',
    tags,
    params: idParams,
    responses: { 200: { description: 'The rep.', schema: repSchema } },
    handler: async ({ services, principal, params }) => ({
      status: 200,
      body: speechRepView(await findOwnedSpeechRep(services, principal, params.id)),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/speech/reps/{id}',
    access: { permission: 'speech.edit' },
    summary: 'Change some fields of a rep; null clears email or teamId.',
    tags,
    params: idParams,
    body: repUpdateSchema,
    responses: { 200: { description: 'The rep.', schema: repSchema } },
    handler: async ({ services, principal, params, body }) => ({
      status: 200,
      body: speechRepView(await updateSpeechRep(services, principal, params.id, body)),
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/speech/reps/{id}',
    access: { permission: 'speech.delete' },
    summary: 'Delete a rep for good. Its analyses stay, without a rep (repId null).',
    tags,
    params: idParams,
    responses: { 204: { description: 'Deleted.' } },
    handler: async ({ services, principal, params }) => {
      await deleteSpeechRep(services, principal, params.id);
      return { status: 204 };
    },
  }),
];

const scorecardRoutes = [
  defineRoute({
    method: 'get',
    path: '/speech/scorecard',
    access: { permission: 'speech.view' },
    summary: "What the workspace's recordings are scored against: its scorecard, or the defaults (updatedAt null).",
    tags,
    responses: { 200: { description: 'The scorecard.', schema: scorecardAnswer } },
    handler: async ({ services, principal }) => ({ status: 200, body: await readScorecard(services, principal) }),
  }),
  defineRoute({
    method: 'put',
    path: '/speech/scorecard',
    access: { permission: 'speech.edit' },
    summary:
      'Replace the scorecard; what is left out takes its default. An unknown key anywhere is refused. Analyses already uploaded keep the scorecard they were scored with.',
    tags,
    body: scorecardBody,
    responses: { 200: { description: 'The scorecard as stored.', schema: scorecardAnswer } },
    handler: async ({ services, principal, body }) => ({
      status: 200,
      body: await replaceScorecard(services, principal, body),
    }),
  }),
];

export const speechPeopleRoutes = [...teamRoutes, ...repRoutes, ...scorecardRoutes];
