// `npm ci` installs exactly package-lock.json, and refuses it when it disagrees with package.json or lacks a
// package an entry asks for (scripts/complete-lockfile.ts explains the platform packages this registry lacks).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { completeLockfilePackages, platformOf } from '../scripts/complete-lockfile';
import { projectRoot } from '../scripts/stack/paths';

type Manifest = { dependencies: Record<string, string>; devDependencies: Record<string, string> };
const read = <T>(file: string) => JSON.parse(readFileSync(path.join(projectRoot, file), 'utf8')) as T;
const manifest = read<Manifest>('package.json');
const lockfile = read<{
  packages: Record<
    string,
    Partial<Manifest> & { version?: string; optionalDependencies?: Record<string, string>; hasInstallScript?: boolean }
  >;
}>('package-lock.json');

describe('package-lock.json', () => {
  it('locks every dependency of package.json at the exact version package.json names', () => {
    const wanted = { ...manifest.dependencies, ...manifest.devDependencies };
    const root = lockfile.packages['']!;
    expect({ ...root.dependencies, ...root.devDependencies }).toEqual(wanted);
    const unlocked = Object.entries(wanted).filter(
      ([name, version]) => lockfile.packages[`node_modules/${name}`]?.version !== version,
    );
    expect(unlocked).toEqual([]);
  });

  it('has no package built against a Node ABI: the install scripts are those known to fetch or check prebuilt binaries', () => {
    // scripts/lib/ensure-tools.sh (install_node_modules_beside_node) lets the machine's npm install the tree while the
    // pinned Node.js is fetched, which holds only while no package compiles against the running node. A new package
    // with an install script must be checked (is it node-gyp?) before it joins this list.
    const withInstallScripts = Object.entries(lockfile.packages)
      .filter(([name, entry]) => name !== '' && entry.hasInstallScript)
      .map(([name]) => name.replace(/^.*node_modules\//, ''))
      .sort();
    expect(withInstallScripts).toEqual([
      '@prisma/client',
      '@prisma/engines',
      '@swc/core',
      'core-js',
      'esbuild',
      'prisma',
    ]);
  });

  it('lists every optional platform package its entries ask for, also those this registry does not serve', () => {
    expect(completeLockfilePackages(structuredClone(lockfile.packages))).toEqual([]);
  });
});

describe('completing a lockfile (npm run lockfile:complete)', () => {
  it('adds a missing platform package fenced to the platform its name names', () => {
    const packages: Parameters<typeof completeLockfilePackages>[0] = {
      '': {},
      'node_modules/native': {
        version: '1.2.3',
        optionalDependencies: { 'native-linux-x64-gnu': '1.2.3', 'native-darwin-arm64': '1.2.3' },
      },
      'node_modules/native-linux-x64-gnu': {
        version: '1.2.3',
        os: ['linux'],
        cpu: ['x64'],
        libc: ['glibc'],
        optional: true,
      },
    };
    expect(completeLockfilePackages(packages)).toEqual(['native-darwin-arm64@1.2.3']);
    expect(packages['node_modules/native-darwin-arm64']).toEqual({
      version: '1.2.3',
      cpu: ['arm64'],
      optional: true,
      os: ['darwin'],
    });
  });

  it('reads the platform from the package name, and refuses a name that names none', () => {
    expect(platformOf('@swc/core-linux-arm-gnueabihf')).toEqual({ os: ['linux'], cpu: ['arm'], libc: ['glibc'] });
    expect(platformOf('@swc/core-linux-x64-musl')).toEqual({ os: ['linux'], cpu: ['x64'], libc: ['musl'] });
    expect(platformOf('@swc/core-win32-ia32-msvc')).toEqual({ os: ['win32'], cpu: ['ia32'] });
    expect(platformOf('fsevents')).toBeNull();
    expect(() =>
      completeLockfilePackages({ 'node_modules/a': { optionalDependencies: { fsevents: '2.3.3' } } }),
    ).toThrow(/names no platform/);
  });
});
