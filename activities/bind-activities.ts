/**
 * Activities are named functions over their dependencies, `attemptCall(dependencies, input)`, so that a reader's search
 * and a code walker reach each one by its name; the worker binds them to its dependencies in one place
 * (activities/index.ts, and the export worker's in worker/create-export-worker.ts). Temporal registers each under
 * its key, which is its name.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the activities' inputs differ; each keeps its own type below.
type ActivityOver<Dependencies> = (dependencies: Dependencies, ...input: any[]) => Promise<unknown>;

/** The activities as a workflow's proxy sees them: the dependencies bound, the input and result as declared. */
export type BoundActivities<Functions> = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- matches any dependencies type.
  [Name in keyof Functions]: Functions[Name] extends (dependencies: any, ...input: infer Input) => infer Result
    ? (...input: Input) => Result
    : never;
};

export function bindActivities<Dependencies, Functions extends Record<string, ActivityOver<Dependencies>>>(
  dependencies: Dependencies,
  activities: Functions,
): BoundActivities<Functions> {
  return Object.fromEntries(
    Object.entries(activities).map(([name, activity]) => [
      name,
      // A named function, so that stack traces and Temporal's logs show the activity's name.
      { [name]: (...input: unknown[]) => activity(dependencies, ...input) }[name],
    ]),
  ) as BoundActivities<Functions>;
}
