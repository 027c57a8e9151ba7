// Lint: TypeScript's type-checked recommended rules everywhere (promises that are never awaited, switches
// that miss a case), the determinism fence around workflows/, one home for Temporal messages, retry policies and
// patch ids, and the layering of the folders (test/import-rules.test.ts shows each rule at work); one floor for
// Temporal as a client, lib/temporal/ (test/temporal-floor.test.ts).
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = builtinModules.flatMap((name) => [name, `node:${name}`]);

// Signals, updates and queries are defined once, in lib/temporal/messages.ts, and imported where sent.
const MESSAGES_MODULE = 'lib/temporal/messages.ts';
const messagesDefinedOnce = {
  name: '@temporalio/workflow',
  importNames: ['defineSignal', 'defineUpdate', 'defineQuery'],
  message: 'Signals, updates and queries are defined once, in lib/temporal/messages.ts: import them from there.',
};
const messagesSentByDefinition = [
  {
    selector:
      'CallExpression[callee.property.name=/^(signal|executeUpdate|startUpdate|executeUpdateWithStart|startUpdateWithStart)$/][arguments.0.type=/^(Literal|TemplateLiteral)$/]',
    message: 'Send the definition from lib/temporal/messages.ts, not its name as a string.',
  },
  {
    selector: 'Property[key.name="signal"][value.type=/^(Literal|TemplateLiteral)$/]',
    message: 'Send the definition from lib/temporal/messages.ts, not its name as a string.',
  },
];
// One home for retry policies: lib/temporal/retry-policies.ts names each one by its intent, and workflows/ passes
// them by name (an ad-hoc variant, even spread from a named one, is named there too).
const RETRY_POLICIES_MODULE = 'lib/temporal/retry-policies.ts';
const retryPoliciesByName = [
  {
    selector:
      'ObjectExpression:has(> Property[key.name=/^(initialInterval|backoffCoefficient|maximumInterval|maximumAttempts|nonRetryableErrorTypes)$/])',
    message: `Retry policies are named in ${RETRY_POLICIES_MODULE}: pass one by name (retry: untilDatabaseAnswers), or name a new one there by its intent.`,
  },
];
// One home for patch ids: lib/temporal/patches.ts registers each patched() id with the histories that need it and
// when it may go (docs/patch-register.md); workflows/ asks patched(PATCHES.<name>.id), never a string of its own.
const patchesByRegister = [
  {
    selector:
      'CallExpression[callee.name=/^(patched|deprecatePatch)$/]:not([arguments.0.property.name="id"][arguments.0.object.object.name="PATCHES"])',
    message:
      'Register the patch in lib/temporal/patches.ts (the workflow, the change, the histories) and pass PATCHES.<name>.id.',
  },
];
// Temporal as a client (starting, signalling, updating, querying, cancelling, listing workflows) is
// lib/temporal/'s alone: its modules are what the API, the activities and the worker call.
const TEMPORAL_FLOOR_MESSAGE =
  'Temporal client calls live in lib/temporal/ (the floor for Temporal as a client): call a function of its modules, or add one there.';
const temporalClientCalls = [
  {
    selector:
      "MemberExpression[object.property.name='workflow'][property.name=/^(start|execute|result|signalWithStart|executeUpdateWithStart|startUpdateWithStart|getHandle|list|count)$/]",
    message: TEMPORAL_FLOOR_MESSAGE,
  },
  {
    selector:
      'MemberExpression[property.name=/^(signalWithStart|executeUpdateWithStart|startUpdateWithStart|getHandle)$/]',
    message: TEMPORAL_FLOOR_MESSAGE,
  },
  { selector: "NewExpression[callee.name='WithStartWorkflowOperation']", message: TEMPORAL_FLOOR_MESSAGE },
];
// Outside workflows/, workflow code is reached as types (workflows are started by their type name).
const workflowCodeAsTypes = {
  regex: '^(\\.\\./)+workflows/',
  allowTypeImports: true,
  message:
    'Outside workflows/, import workflow code as types only; signals, updates and queries come from lib/temporal/messages.',
};
// lib/ serves every layer, so it imports none of them, not even types. lib/temporal/, the floor that starts
// workflows for the API and the worker, included: it types them by lib/temporal/workflow-contracts.ts.
const libLayering = {
  regex: '^(\\.\\./)+(workflows|activities|api|worker|cli|scripts|bench|test)(/|$)',
  message:
    'lib/ is shared by every layer and imports none of them: put the code where it is used, or what it needs into lib/.',
};
// api/http is the plumbing under every feature's routes: it reaches no feature folder of api/ (api/door, the edge's
// authentication, is part of the edge), only the AppServices type it hands to handlers.
const httpLayering = [
  {
    regex: '^\\.\\./(?!(http|door|openapi|\\.\\.)/)[^/]+/',
    message: 'api/http imports no feature of api/: wire feature middleware in api/app.ts.',
  },
  { regex: '^\\.\\./app-services$', allowTypeImports: true, message: 'api/http takes AppServices as a type only.' },
];
// Services speak the domain: they refuse with a Refusal (lib/refusal.ts), a code without an HTTP status, and
// api/http/error-statuses.ts gives each code its status at the edge. The HTTP error class stays in api/http and
// the route tables (routes.ts, *-routes.ts); the CLI, activities and the worker never see it. lib/ and
// workflows/ import nothing of api/ at all (their own blocks below).
const SERVICE_FILES = ['api/**/*.ts', 'activities/**/*.ts', 'cli/**/*.ts', 'worker/**/*.ts'];
const ROUTE_TABLES = ['api/**/routes.ts', 'api/**/*-routes.ts'];
const noHttpErrors = {
  regex: '(^|/)http/api-error(\\.[cm]?[jt]s)?$',
  message:
    'Services refuse with a Refusal (lib/refusal.ts), which carries no HTTP status: api/http/error-statuses.ts gives each code its status. ApiError is for route tables and api/http.',
};
const noApiErrorThrown = {
  selector: 'NewExpression[callee.name="ApiError"]',
  message:
    'Services refuse with a Refusal (lib/refusal.ts), which carries no HTTP status: api/http/error-statuses.ts gives each code its status. ApiError is for route tables and api/http.',
};
// The determinism fence: workflow code is replayed inside Temporal's sandbox, so no Node built-ins, no I/O,
// and activities only as types (they run in the worker, reached through proxyActivities).
const workflowFence = {
  paths: [
    ...nodeBuiltins.map((name) => ({ name, message: 'Node built-ins are not deterministic: do this in an activity.' })),
    ...[
      'pg',
      'express',
      '@prisma/client',
      '@prisma/adapter-pg',
      '@temporalio/client',
      '@temporalio/worker',
      '@temporalio/activity',
    ].map((name) => ({ name, message: 'I/O belongs in activities/, not in workflow code.' })),
  ],
  patterns: [
    {
      group: ['**/activities', '**/activities/**'],
      allowTypeImports: true,
      message: 'Import activities as types only and call them through proxyActivities.',
    },
    {
      group: ['**/generated/**', '**/lib/database', '**/api/**', '**/scripts/**'],
      message: 'I/O belongs in activities/, not in workflow code.',
    },
  ],
};
// Options of one rule are not merged across blocks: each block below gives a file its whole list.
const restrictedImports = ({ paths = [], patterns = [] }) => ({
  '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns }],
});

export default tseslint.config(
  { ignores: ['node_modules/**', 'generated/**', 'dist/**', '.data/**', '.tools/**', 'test/lint-fixtures/**'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'test/support/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Route handlers and activities implement interfaces that return promises; an async body with
      // nothing to await yet is the interface, not a mistake.
      '@typescript-eslint/require-await': 'off',
      // It disagrees with the compiler about Prisma's JSON input types: removing the assertions it
      // flags there breaks the type check.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
    },
  },
  {
    files: ['test/**/*.ts', 'test/**/*.mjs'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Tests read JSON bodies (any) and pass vitest's spies around; the promise rules stay on.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    files: ['**/*.ts'],
    rules: {
      ...restrictedImports({ paths: [messagesDefinedOnce], patterns: [workflowCodeAsTypes] }),
      'no-restricted-syntax': ['error', ...messagesSentByDefinition],
    },
  },
  { files: ['lib/**/*.ts'], rules: restrictedImports({ paths: [messagesDefinedOnce], patterns: [libLayering] }) },
  {
    files: ['api/**/*.ts', 'activities/**/*.ts', 'cli/**/*.ts', 'worker/**/*.ts', 'lib/**/*.ts'],
    ignores: ['lib/temporal/**'],
    rules: { 'no-restricted-syntax': ['error', ...messagesSentByDefinition, ...temporalClientCalls] },
  },
  // After the Temporal floor's block, whose no-restricted-syntax list it extends for these files.
  {
    files: SERVICE_FILES,
    ignores: ['api/http/**', ...ROUTE_TABLES],
    rules: {
      ...restrictedImports({ paths: [messagesDefinedOnce], patterns: [workflowCodeAsTypes, noHttpErrors] }),
      'no-restricted-syntax': ['error', ...messagesSentByDefinition, ...temporalClientCalls, noApiErrorThrown],
    },
  },
  {
    files: ['api/http/**/*.ts'],
    rules: restrictedImports({ paths: [messagesDefinedOnce], patterns: [workflowCodeAsTypes, ...httpLayering] }),
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      ...restrictedImports({ paths: [...workflowFence.paths, messagesDefinedOnce], patterns: workflowFence.patterns }),
      'no-restricted-syntax': ['error', ...messagesSentByDefinition, ...retryPoliciesByName, ...patchesByRegister],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'The environment is not deterministic: pass values in as workflow input.' },
        { name: 'fetch', message: 'Network I/O belongs in an activity.' },
        { name: 'require', message: 'Use static imports.' },
      ],
    },
  },
  // Bundled with the workflows (they set their handlers from it), and a lib/ module: both fences, and lib's
  // layering over the fence's leave to take activities as types.
  {
    files: [MESSAGES_MODULE],
    rules: restrictedImports({
      paths: workflowFence.paths,
      patterns: [...workflowFence.patterns.filter((pattern) => !pattern.allowTypeImports), libLayering],
    }),
  },
);
