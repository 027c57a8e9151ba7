// The patch register (lib/temporal/patches.ts, docs/patch-register.md): every patched() or deprecatePatch() call of
// workflows/ names a registered patch, and what the register says of the committed histories is what they hold.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PATCHES, REGISTERED_PATCHES, type RegisteredPatch } from '../lib/temporal/patches';

const root = path.resolve(import.meta.dirname, '..');
const workflowsDir = path.join(root, 'workflows');
const historiesDir = path.join(root, 'test/histories');

interface RecordedHistory {
  name: string;
  workflowType: string;
  /** The patch markers it records: id, and whether deprecatePatch wrote it. */
  markers: Map<string, { deprecated: boolean }>;
}

/** Each committed history's workflow type and patch markers (MarkerRecorded "core_patch" events). */
function recordedHistories(): RecordedHistory[] {
  return readdirSync(historiesDir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const { events } = JSON.parse(readFileSync(path.join(historiesDir, file), 'utf8')) as {
        events: Array<Record<string, any>>;
      };
      const markers = new Map<string, { deprecated: boolean }>();
      for (const event of events) {
        const marker = event.markerRecordedEventAttributes;
        if (marker?.markerName !== 'core_patch') continue;
        const [payload] = marker.details['patch-data'].payloads;
        const { id, deprecated } = JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));
        markers.set(id, { deprecated });
      }
      return {
        name: file.replace(/\.json$/, ''),
        workflowType: events[0]!.workflowExecutionStartedEventAttributes.workflowType.name,
        markers,
      };
    });
}

/** Every patched( or deprecatePatch( call in workflows/: the file, the function and its argument as written. */
function patchCalls(): Array<{ file: string; call: 'patched' | 'deprecatePatch'; argument: string }> {
  return readdirSync(workflowsDir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .sort()
    .flatMap((file) =>
      [...readFileSync(path.join(workflowsDir, file), 'utf8').matchAll(/\b(patched|deprecatePatch)\(([^)]*)\)/g)].map(
        ([, call, argument]) => ({
          file: `workflows/${file}`,
          call: call as 'patched' | 'deprecatePatch',
          argument: argument!.trim().replace(/,$/, ''),
        }),
      ),
    );
}

/** The file under workflows/ that defines a workflow type. */
function fileOfWorkflow(workflow: string): string | undefined {
  return readdirSync(workflowsDir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .find((file) => readFileSync(path.join(workflowsDir, file), 'utf8').includes(`export async function ${workflow}(`))
    ?.replace(/^/, 'workflows/');
}

const sorted = (names: readonly string[]) => [...names].sort();

describe('the patch register (lib/temporal/patches.ts)', () => {
  const histories = recordedHistories();
  const calls = patchCalls();

  it('registers each id once, under a kebab-case id, for a workflow that exists', () => {
    const ids = REGISTERED_PATCHES.map((patch) => patch.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const patch of REGISTERED_PATCHES) {
      // Words may hold digits: call-node-ladder-v2 names the type it starts (leadLadderWorkflowV2).
      expect(patch.id).toMatch(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/);
      expect(fileOfWorkflow(patch.workflow), patch.id).toBeDefined();
      expect(patch.since.commit).toMatch(/^[0-9a-f]{7,40}$/);
    }
  });

  it('is what every patched() and deprecatePatch() of workflows/ asks, in the workflow it names', () => {
    expect(calls.length).toBeGreaterThanOrEqual(REGISTERED_PATCHES.length);
    for (const { file, call, argument } of calls) {
      const name = /^PATCHES\.(\w+)\.id$/.exec(argument)?.[1];
      expect(name, `${file}: ${call}(${argument})`).toBeDefined();
      const patch: RegisteredPatch | undefined = PATCHES[name as keyof typeof PATCHES];
      expect(patch, `${file}: ${call}(${argument})`).toBeDefined();
      expect(file, patch!.id).toBe(fileOfWorkflow(patch!.workflow));
      expect(call, patch!.id).toBe(patch!.status === 'patched' ? 'patched' : 'deprecatePatch');
    }
    // And every registered patch is still asked somewhere: one no longer asked is retired for good, not registered.
    for (const name of Object.keys(PATCHES))
      expect(
        calls.some(({ argument }) => argument === `PATCHES.${name}.id`),
        name,
      ).toBe(true);
  });

  it('names, for each patch, exactly the committed histories that record its marker', () => {
    for (const patch of REGISTERED_PATCHES) {
      const recording = histories.filter((history) => history.markers.has(patch.id));
      expect(sorted(patch.recordedIn), patch.id).toEqual(sorted(recording.map((history) => history.name)));
      for (const history of recording) expect(history.workflowType, history.name).toBe(patch.workflow);
    }
    // A marker in a history that no patch registers would be a patch nobody can retire.
    const registered = new Set(REGISTERED_PATCHES.map((patch) => patch.id));
    for (const history of histories)
      for (const id of history.markers.keys()) expect(registered.has(id), `${history.name}: ${id}`).toBe(true);
  });

  it("sorts each workflow's other histories into those that take the old branch and those that never ask", () => {
    for (const patch of REGISTERED_PATCHES) {
      const without = sorted(
        histories
          .filter((history) => history.workflowType === patch.workflow && !history.markers.has(patch.id))
          .map((history) => history.name),
      );
      expect(sorted([...patch.oldPathIn, ...patch.notReachedIn]), patch.id).toEqual(without);
      expect(new Set([...patch.oldPathIn, ...patch.notReachedIn]).size, patch.id).toBe(
        patch.oldPathIn.length + patch.notReachedIn.length,
      );
      // A deprecated patch's old branch is gone: no committed history may still need it.
      if (patch.status === 'deprecated') expect(patch.oldPathIn, patch.id).toEqual([]);
    }
  });

  it('says why each patch stays (the count that would retire it, the histories retired with it) or when it went', () => {
    for (const patch of REGISTERED_PATCHES) {
      if (patch.status === 'deprecated') {
        expect(patch.decision, patch.id).toMatch(/^Retired on \d{4}-\d{2}-\d{2} /);
        continue;
      }
      expect(patch.decision, patch.id).toMatch(/^Keep: /);
      expect(patch.decision, patch.id).toContain(
        `temporal workflow count --query "WorkflowType='${patch.workflow}' AND ExecutionStatus='Running' AND ` +
          `StartTime < '<the release carrying ${patch.since.commit}>'"`,
      );
      for (const history of patch.oldPathIn) expect(patch.decision, `${patch.id}: ${history}`).toContain(history);
    }
  });

  it('is listed in docs/patch-register.md, each patch with its workflow, commit and status', () => {
    const page = readFileSync(path.join(root, 'docs/patch-register.md'), 'utf8');
    for (const patch of REGISTERED_PATCHES)
      expect(page, patch.id).toContain(
        `| \`${patch.id}\` | \`${patch.workflow}\` | ${patch.since.commit} (${patch.since.date}) | ${patch.status} |`,
      );
    expect(existsSync(path.join(root, 'scripts/replay-without-patch.ts'))).toBe(true);
  });
});
