/*
 * The refusals of the operator's commands (cli/) and the services they share with the API, for the state things are
 * in rather than for their input: the edge decides what each becomes (exit 1 with its message; an HTTP status).
 * Here, under no feature, so every feature can throw them without importing another.
 */

/** What was named does not exist (or is not the workspace's). */
export class NotFoundError extends Error {}

/** What was asked cannot be done in the state things are in. */
export class ConflictError extends Error {}
