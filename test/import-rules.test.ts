import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectEslint } from './support/project-eslint';
import {
  folderCycles,
  importCycles,
  importGraph,
  strangerImports,
  upwardArrows,
  type StrangerRules,
} from './support/import-graph';
import * as productTwinAccounts from '../lib/carriers/twin';
import { DEVELOPMENT_TWILIO_ACCOUNT } from '../simulators/twilio-twin/config';
import { DEVELOPMENT_TELNYX_ACCOUNT } from '../simulators/telnyx-twin/config';
import { publicKeyBase64, signingKey } from '../simulators/telnyx-twin/signature';
import * as simulatedCarrierProtocol from '../simulators/simulated-carrier/protocol';
import { callEventSchema } from '../lib/calls/call-event';
import { CARRIER_CALL_STATES, CARRIER_PROGRESS_STATES, isTerminalCallState } from '../lib/calls/call-states';
import { SIGNATURE_HEADER, verifyEventSignature } from '../lib/calls/signature';

const projectRoot = path.resolve(import.meta.dirname, '..');
const SOURCE_FOLDERS = [
  'api',
  'workflows',
  'activities',
  'lib',
  'cli',
  'worker',
  'simulators',
  'scripts',
  'test',
  'bench',
  'prisma',
];

/**
 * What each layer's files may import (docs/architecture.md#the-layers): lib/ serves every layer and imports none;
 * workflows/ import lib/ (and activities/ as types, which the determinism fence checks); activities/ and api/
 * are siblings over lib/ that never import each other; the entry points (worker/, cli/) compose. The Temporal
 * client floor is lib/temporal/: nothing outside workflows/ and worker/ reaches workflows/. scripts/, bench/
 * and test/ drive the whole product and may import anything.
 */
const LAYERS: Record<string, readonly string[]> = {
  lib: ['lib', 'generated'],
  workflows: ['workflows', 'lib', 'activities'],
  activities: ['activities', 'lib', 'generated'],
  api: ['api', 'lib', 'generated'],
  simulators: ['simulators', 'lib', 'generated'],
  prisma: ['prisma', 'lib', 'generated'],
  worker: ['worker', 'activities', 'workflows', 'lib', 'generated'],
  // The operator CLI runs the API's use cases (publishing a journey) and finds the dev stack's database.
  cli: ['cli', 'api', 'lib', 'generated', 'scripts'],
};
const eslint = projectEslint;

/** The rules a source broke, as if it were the file at filePath. */
async function ruleIdsOf(filePath: string, code: string) {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((message) => message.ruleId);
}

const RESTRICTED = '@typescript-eslint/no-restricted-imports';

describe('the layering of the folders (eslint.config.js)', () => {
  it('lib/ imports nothing from workflows/, activities/ or api/, not even types', async () => {
    for (const source of [
      "import type { LeadState } from '../workflows/lead-dial';\nexport type X = LeadState;\n",
      "import type { Activities } from '../../activities';\nexport type X = Activities;\n",
      "import { upsertLeads } from '../../api/leads/lead-store';\nexport const x = upsertLeads;\n",
    ])
      expect(await ruleIdsOf('lib/journeys/example.ts', source)).toContain(RESTRICTED);
    expect(
      await ruleIdsOf(
        'lib/example.ts',
        "import { leadWorkflowId } from './workflow-ids';\nexport const x = leadWorkflowId;\n",
      ),
    ).toEqual([]);
  });

  it('api/http imports no feature of api/ (but the door) and takes AppServices as a type only', async () => {
    expect(
      await ruleIdsOf(
        'api/http/example.ts',
        "import { logCampaignRequests } from '../campaign-data/api-logs';\nexport const x = logCampaignRequests;\n",
      ),
    ).toContain(RESTRICTED);
    expect(
      await ruleIdsOf(
        'api/http/example.ts',
        "import { appServicesOf } from '../app-services';\nexport const x = appServicesOf;\n",
      ),
    ).toContain(RESTRICTED);
    for (const allowed of [
      "import type { AppServices } from '../app-services';\nexport type X = AppServices;\n",
      "import { authenticate } from '../door/authenticate';\nexport const x = authenticate;\n",
      "import { isUuid } from '../../lib/uuid';\nexport const x = isUuid;\n",
    ])
      expect(await ruleIdsOf('api/http/example.ts', allowed)).toEqual([]);
  });

  it('outside workflows/, workflow code is imported as types only; messages come from lib/temporal/messages', async () => {
    expect(
      await ruleIdsOf(
        'api/campaigns/example.ts',
        "import { journeyRunWorkflow } from '../../workflows/journey-run';\nexport const x = journeyRunWorkflow;\n",
      ),
    ).toContain(RESTRICTED);
    expect(
      await ruleIdsOf(
        'api/campaigns/example.ts',
        "import type { journeyRunWorkflow } from '../../workflows/journey-run';\nexport type X = typeof journeyRunWorkflow;\n",
      ),
    ).toEqual([]);
    expect(
      await ruleIdsOf(
        'activities/example.ts',
        "import { campaignChangedSignal } from '../lib/temporal/messages';\nexport const x = campaignChangedSignal;\n",
      ),
    ).toEqual([]);
  });
});

describe('services refuse with codes, the edge decides the status (eslint.config.js)', () => {
  const importing = (from: string) =>
    `import { ApiError } from '${from}';\nexport const refuse = () => new ApiError(409, 'campaign_stopped');\n`;
  const throwing = "export const refuse = () => { throw new ApiError(409, 'campaign_stopped'); };\n";

  it('keeps the HTTP error class out of services, the door, activities, the worker and the CLI', async () => {
    for (const [file, from] of [
      ['api/campaigns/example.ts', '../http/api-error'],
      ['api/door/example.ts', '../http/api-error'],
      ['api/openapi/example.ts', '../http/api-error'],
      ['activities/campaigns/example.ts', '../../api/http/api-error'],
      ['worker/example.ts', '../api/http/api-error'],
      ['cli/example.ts', '../api/http/api-error.ts'],
      ['lib/campaigns/example.ts', '../../api/http/api-error'],
      ['workflows/campaigns/example.ts', '../../api/http/api-error'],
    ])
      expect(await ruleIdsOf(file!, importing(from!)), file).toContain(RESTRICTED);
    // Re-exported under its own name from elsewhere, it is still not thrown.
    expect(await ruleIdsOf('api/campaigns/example.ts', throwing)).toContain('no-restricted-syntax');
  });

  it('lets route tables and api/http answer with a status of their own', async () => {
    for (const file of ['api/leads/routes.ts', 'api/whatsapp/send-routes.ts'])
      expect(await ruleIdsOf(file, importing('../http/api-error')), file).toEqual([]);
    expect(await ruleIdsOf('api/http/example.ts', importing('./api-error'))).toEqual([]);
  });

  it('lets services refuse with a Refusal, which carries no status', async () => {
    const refusal = (from: string) =>
      `import { Refusal } from '${from}';\nexport const refuse = () => new Refusal('campaign_stopped');\n`;
    expect(await ruleIdsOf('api/campaigns/example.ts', refusal('../../lib/refusal'))).toEqual([]);
    expect(await ruleIdsOf('cli/example.ts', refusal('../lib/refusal'))).toEqual([]);
  });
});

describe('one home for signals, updates and queries (eslint.config.js)', () => {
  const definition =
    "import { defineSignal } from '@temporalio/workflow';\nexport const nudge = defineSignal('nudge');\n";

  it('defines them in lib/temporal/messages.ts only', async () => {
    expect(await ruleIdsOf('workflows/example.ts', definition)).toContain(RESTRICTED);
    expect(await ruleIdsOf('activities/example.ts', definition)).toContain(RESTRICTED);
    expect(await ruleIdsOf('lib/temporal/messages.ts', definition)).toEqual([]);
  });

  it('sends the definition, never its name as a string', async () => {
    const send = (what: string) =>
      `import type { WorkflowHandle } from '@temporalio/client';\nexport const send = (handle: WorkflowHandle) => ${what};\n`;
    expect(await ruleIdsOf('activities/example.ts', send("handle.signal('campaignChanged')"))).toContain(
      'no-restricted-syntax',
    );
    expect(
      await ruleIdsOf('api/campaigns/example.ts', send("handle.executeUpdate('recover', { args: [] })")),
    ).toContain('no-restricted-syntax');
    expect(
      await ruleIdsOf(
        'activities/example.ts',
        `import { campaignChangedSignal } from '../lib/temporal/messages';\n${send('handle.signal(campaignChangedSignal)')}`,
      ),
    ).toEqual([]);
  });
});

describe('one home for retry policies (eslint.config.js)', () => {
  it('refuses a retry-policy object literal in workflows/, however it is written', async () => {
    const proxy = (retry: string) =>
      `import { proxyActivities } from '@temporalio/workflow';\nexport const a = proxyActivities({ startToCloseTimeout: '1 minute', retry: ${retry} });\n`;
    const named = "import { untilDatabaseAnswers } from '../lib/temporal/retry-policies';\n";
    for (const source of [
      proxy("{ initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' }"),
      "const retry = { initialInterval: '1 second', maximumAttempts: 20 };\nexport const options = { retry };\n",
      `${named}export const options = { retry: { ...untilDatabaseAnswers, maximumAttempts: 3 } };\n`,
    ])
      expect(await ruleIdsOf('workflows/example.ts', source)).toEqual(['no-restricted-syntax']);
    expect(await ruleIdsOf('workflows/example.ts', `${named}${proxy('untilDatabaseAnswers')}`)).toEqual([]);
    // Their home names them as literals.
    expect(
      await ruleIdsOf('lib/temporal/retry-policies.ts', "export const p = { initialInterval: '1 second' };\n"),
    ).toEqual([]);
  });
});

describe('one home for patch ids (eslint.config.js)', () => {
  it('refuses patched() or deprecatePatch() in workflows/ with an id that is not PATCHES.<name>.id', async () => {
    const ask = (call: string) =>
      `import { deprecatePatch, patched } from '@temporalio/workflow';\nimport { PATCHES } from '../lib/temporal/patches';\nexport const ask = () => ${call};\nexport const used = [patched, deprecatePatch, PATCHES];\n`;
    for (const call of [
      "patched('local-bookkeeping')",
      'patched(`local-bookkeeping`)',
      "deprecatePatch('test-call-billing')",
      'patched(PATCHES.localBookkeeping)',
    ])
      expect(await ruleIdsOf('workflows/example.ts', ask(call))).toEqual(['no-restricted-syntax']);
    expect(await ruleIdsOf('workflows/example.ts', ask('patched(PATCHES.localBookkeeping.id)'))).toEqual([]);
  });
});

describe('import cycles, type-only imports included', () => {
  it('there are none in the project', () => {
    expect(importCycles(importGraph(projectRoot, SOURCE_FOLDERS))).toEqual([]);
  });

  it('are found through type-only imports, import() types and dynamic imports', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'type-cycles-'));
    try {
      const files: Record<string, string> = {
        'a.ts': "import type { B } from './b';\nexport type A = B;\n",
        'b.ts': "export type B = import('./a').A;\n",
        'c.ts': "export { type D as C } from './d';\n",
        'd.ts': "import type { C } from './c';\nexport type D = C;\n",
        'e.ts': "export const e = async () => (await import('./f')).f;\n",
        'f.ts': "import { e } from './e';\nexport const f = e;\n",
        'g.ts': "import type { H } from './h';\nexport type G = H;\n",
        'h.ts': 'export type H = string;\n',
      };
      for (const [name, code] of Object.entries(files)) writeFileSync(path.join(dir, name), code);
      expect(importCycles(importGraph(dir, ['.']))).toEqual([
        ['a.ts', 'b.ts'],
        ['c.ts', 'd.ts'],
        ['e.ts', 'f.ts'],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('loops between the feature folders of lib/ and api/, type-only imports included', () => {
  it('there are none: each folder can be read after the folders it imports', () => {
    const graph = importGraph(projectRoot, ['lib', 'api']);
    expect(folderCycles(graph, 'lib')).toEqual([]);
    expect(folderCycles(graph, 'api')).toEqual([]);
  });

  it('are found between folders even when no file loop exists, and a file right under the top counts as its own', () => {
    const graph = new Map([
      ['lib/calls/a.ts', ['lib/carriers/b.ts']],
      ['lib/carriers/b.ts', []],
      ['lib/carriers/c.ts', ['lib/config.ts']],
      ['lib/config.ts', ['lib/calls/d.ts']],
      ['lib/calls/d.ts', []],
      ['lib/leaf/e.ts', ['lib/calls/a.ts']],
      ['api/x/f.ts', ['lib/leaf/e.ts']],
    ]);
    expect(folderCycles(graph, 'lib')).toEqual([['lib/calls', 'lib/carriers', 'lib/config.ts']]);
    expect(folderCycles(graph, 'api')).toEqual([]);
  });
});

describe('arrows that run back up', () => {
  it('there are none: activities/ never import api/, api/ never imports activities/, lib/ imports no layer', () => {
    expect(upwardArrows(importGraph(projectRoot, SOURCE_FOLDERS), LAYERS)).toEqual([]);
  });

  it('are found, type-only imports included, and a folder free to import anything is not held back', () => {
    const graph = new Map([
      ['activities/calls/a.ts', ['api/leads/b.ts', 'lib/c.ts']],
      ['api/leads/b.ts', ['activities/calls/a.ts', 'lib/c.ts']],
      ['lib/c.ts', ['workflows/d.ts']],
      ['test/e.test.ts', ['api/leads/b.ts', 'activities/calls/a.ts']],
    ]);
    expect(upwardArrows(graph, LAYERS)).toEqual([
      'activities/calls/a.ts -> api/leads/b.ts',
      'api/leads/b.ts -> activities/calls/a.ts',
      'lib/c.ts -> workflows/d.ts',
    ]);
  });
});

/**
 * A twin stands for a provider: it encodes what the provider documents and none of the product's reading of it, so that
 * it catches the product misreading the provider (issue 41, docs/providers.md). Shared infrastructure is all it takes.
 * The simulated carrier too: its protocol is the product's own, but it keeps its own copy (protocol.ts), so that a
 * product misreading its own page is caught.
 */
const SIMULATOR_RULES: StrangerRules = {
  folder: 'simulators',
  allowed: [
    'lib/log.ts',
    'lib/renamed-settings.ts',
    'lib/shutdown.ts',
    'lib/http/listen.ts',
    'lib/http/json-http.ts',
    'lib/http/post-until-answered.ts',
  ],
};

describe('the twins are strangers to the product', () => {
  it('no file under simulators/ reaches the product beyond shared infrastructure, the simulated carrier included', () => {
    expect(strangerImports(importGraph(projectRoot, ['simulators']), SIMULATOR_RULES)).toEqual([]);
  });

  it('are caught importing a rule of the product, directly or through another simulator, the simulated carrier too', () => {
    const graph = new Map([
      ['simulators/meta-twin/server.ts', ['lib/whatsapp/webhook.ts', 'lib/log.ts', 'simulators/twin-common/a.ts']],
      ['simulators/twin-common/a.ts', ['lib/config.ts', 'lib/http/listen.ts']],
      ['simulators/telnyx-twin/calls.ts', ['simulators/simulated-carrier/timeline.ts']],
      ['simulators/simulated-carrier/timeline.ts', ['lib/calls/call-states.ts']],
      ['simulators/simulated-carrier/server.ts', ['lib/calls/signature.ts', 'lib/http/json-http.ts']],
      ['simulators/simulated-carrier/conversation.ts', ['lib/lead-placeholders.ts']],
      ['lib/whatsapp/webhook.ts', ['lib/config.ts']],
    ]);
    expect(strangerImports(graph, SIMULATOR_RULES)).toEqual([
      'simulators/meta-twin/server.ts -> lib/whatsapp/webhook.ts',
      'simulators/meta-twin/server.ts -> lib/config.ts (through simulators/twin-common/a.ts)',
      'simulators/simulated-carrier/conversation.ts -> lib/lead-placeholders.ts',
      'simulators/simulated-carrier/server.ts -> lib/calls/signature.ts',
      'simulators/simulated-carrier/timeline.ts -> lib/calls/call-states.ts',
      'simulators/telnyx-twin/calls.ts -> lib/calls/call-states.ts (through simulators/simulated-carrier/timeline.ts)',
      'simulators/twin-common/a.ts -> lib/config.ts',
    ]);
  });

  it('finds a real file importing the product, type-only and dynamic imports included', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'stranger-twins-'));
    try {
      const files: Record<string, string> = {
        'lib/whatsapp/provider.ts':
          'export const WHATSAPP_ERROR = { undeliverable: 131026 };\nexport type Rating = string;\n',
        'lib/log.ts': 'export const log = console;\n',
        'simulators/meta-twin/rules.ts':
          "import type { Rating } from '../../lib/whatsapp/provider';\nimport { log } from '../../lib/log';\nexport const r: Rating = 'GREEN';\nexport const l = log;\n",
        'simulators/meta-twin/server.ts':
          "export const codes = async () => (await import('../../lib/whatsapp/provider')).WHATSAPP_ERROR;\n",
      };
      for (const [name, code] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
        writeFileSync(path.join(dir, name), code);
      }
      expect(strangerImports(importGraph(dir, ['simulators']), SIMULATOR_RULES)).toEqual([
        'simulators/meta-twin/rules.ts -> lib/whatsapp/provider.ts',
        'simulators/meta-twin/server.ts -> lib/whatsapp/provider.ts',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the product's development connections hold the twins' own development accounts", () => {
    expect(productTwinAccounts.TWILIO_TWIN_ACCOUNT_SID).toBe(DEVELOPMENT_TWILIO_ACCOUNT.sid);
    expect(productTwinAccounts.TWILIO_TWIN_AUTH_TOKEN).toBe(DEVELOPMENT_TWILIO_ACCOUNT.authToken);
    expect([productTwinAccounts.TELNYX_TWIN_API_KEY]).toEqual(DEVELOPMENT_TELNYX_ACCOUNT.apiKeys);
    expect([{ id: productTwinAccounts.TELNYX_TWIN_CONNECTION_ID }]).toEqual(DEVELOPMENT_TELNYX_ACCOUNT.connections);
    expect(productTwinAccounts.TELNYX_TWIN_PUBLIC_KEY).toBe(
      publicKeyBase64(signingKey(DEVELOPMENT_TELNYX_ACCOUNT.signingKey)),
    );
  });

  it("the simulated carrier's own copy of its protocol says what the product's says (docs/features/calls.md)", () => {
    const carrier = simulatedCarrierProtocol;
    expect(carrier.CALL_STATES).toEqual(CARRIER_CALL_STATES);
    expect(carrier.PROGRESS_STATES).toEqual(CARRIER_PROGRESS_STATES);
    for (const state of carrier.CALL_STATES)
      expect(carrier.isTerminalCallState(state), state).toBe(isTerminalCallState(state));
    const event: simulatedCarrierProtocol.CallEvent = {
      eventId: 'sim_1:completed',
      providerCallId: 'sim_1',
      attemptId: 'attempt-1',
      status: 'completed',
      answeredBy: 'human',
      durationMs: 30_000,
      reason: null,
      occurredAt: '2026-03-05T10:00:00.000Z',
    };
    expect(callEventSchema.parse(event)).toEqual(event);
    const body = JSON.stringify({ ...event, reason: 'ñ, a non-ASCII body' });
    expect(carrier.SIGNATURE_HEADER).toBe(SIGNATURE_HEADER);
    expect(verifyEventSignature('secret', Buffer.from(body), carrier.signEvent('secret', body))).toBe(true);
  });
});
