// `npm run lockfile:complete`: run after any `npm install` that rewrote package-lock.json
// (docs/testing.md#dependencies-and-the-lockfile).
//
// The registry these machines reach serves no macOS, Windows, 32-bit ARM, ppc64 or s390x builds of packages
// that ship one native package per platform (@swc/core's, through @temporalio/worker). `npm install` then leaves
// them out of the lockfile, and `npm ci` refuses the lockfile ("Missing: @swc/core-darwin-arm64@ from lock
// file"). This adds, for each optional dependency missing from the lockfile, the entry npm would have written:
// the version the parent asks for, `optional`, and its os/cpu/libc taken from the platform in its name, so npm
// skips it on every other platform without asking the registry. The registry's integrity hash cannot be known
// here, so these entries carry none: on the platform that needs one, npm fetches it by name and version.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './stack/paths';

interface LockEntry {
  version?: string;
  optional?: boolean;
  optionalDependencies?: Record<string, string>;
  os?: string[];
  cpu?: string[];
  libc?: string[];
}

const OPERATING_SYSTEMS = new Set(['darwin', 'linux', 'win32', 'freebsd', 'android', 'openbsd', 'sunos', 'aix']);
const CPUS = new Set(['arm64', 'x64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el']);

/** `@swc/core-linux-arm-gnueabihf` -> os linux, cpu arm, libc glibc; null when the name names no platform. */
export function platformOf(name: string): Pick<LockEntry, 'os' | 'cpu' | 'libc'> | null {
  const parts = name.split('/').pop()!.split('-');
  const osIndex = parts.findIndex((part) => OPERATING_SYSTEMS.has(part));
  const cpu = parts[osIndex + 1];
  if (osIndex === -1 || cpu === undefined || !CPUS.has(cpu)) return null;
  const abi = parts[osIndex + 2];
  const libc = abi?.startsWith('gnu') ? ['glibc'] : abi === 'musl' ? ['musl'] : undefined;
  return { os: [parts[osIndex]!], cpu: [cpu], ...(libc ? { libc } : {}) };
}

/** The lockfile's packages with an entry for every platform package missing from it; the names added. */
export function completeLockfilePackages(packages: Record<string, LockEntry>): string[] {
  const added: string[] = [];
  for (const [location, entry] of Object.entries(packages)) {
    for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
      // Where npm would look for it: beside the parent's own node_modules, then up to the root's.
      const candidates = [`${location}/node_modules/${name}`, `node_modules/${name}`];
      if (candidates.some((candidate) => packages[candidate])) continue;
      const platform = platformOf(name);
      if (!platform)
        throw new Error(
          `${location} has the optional dependency ${name}, missing from the lockfile, and its name names no platform`,
        );
      // In the order npm writes an entry's fields.
      packages[`node_modules/${name}`] = {
        version,
        cpu: platform.cpu,
        ...(platform.libc ? { libc: platform.libc } : {}),
        optional: true,
        os: platform.os,
      };
      added.push(`${name}@${version}`);
    }
  }
  return added;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const lockfilePath = path.join(projectRoot, 'package-lock.json');
  const lockfile = JSON.parse(readFileSync(lockfilePath, 'utf8')) as { packages: Record<string, LockEntry> };
  const added = completeLockfilePackages(lockfile.packages);
  // npm keeps the packages in name order.
  lockfile.packages = Object.fromEntries(
    Object.entries(lockfile.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en'))),
  );
  writeFileSync(lockfilePath, `${JSON.stringify(lockfile, null, 2)}\n`);
  console.log(
    added.length > 0
      ? `added to package-lock.json: ${added.join(', ')}`
      : 'package-lock.json already lists every platform package',
  );
}
