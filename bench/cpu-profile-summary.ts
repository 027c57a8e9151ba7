// `tsx bench/cpu-profile-summary.ts <file.cpuprofile> [--per N] [--rows N] [--skip-seconds S] [--match TEXT]`:
// where a V8 CPU profile (node --cpu-prof) spent its time, for comparing processes of the benches function by
// function. Prints the busy time (every sample but the idle, program and GC roots, which are listed apart), then
// the functions by self time, then the project's own functions (and the packages they call into) by inclusive time:
// a sample counts once for every distinct function on its stack. With --per N (the leads the process handled) every
// figure is also given in ms per N; --skip-seconds S leaves out the first S seconds (the process's start-up);
// --windows A-B,C-D keeps only those seconds of the profile (the rounds; --timeline shows busy ms by second);
// --callers TEXT sums the stacks above each frame matching TEXT (who calls it); --match TEXT keeps only the inclusive rows whose name or file contains TEXT. A profile covers the process's whole
// life: subtract what a run did besides the leads (its warm-up is leads too, so count them in N).
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args.splice(at, 2)[1] : undefined;
};
const per = Number(option('--per') ?? 0);
const rows = Number(option('--rows') ?? 40);
const skipSeconds = Number(option('--skip-seconds') ?? 0);
/** --windows 26-54,60-70: only the samples within these seconds of the profile (the rounds, from --timeline). */
const windows = (option('--windows') ?? '')
  .split(',')
  .filter(Boolean)
  .map((range) => range.split('-').map(Number) as [number, number]);
const timeline = args.includes('--timeline') ? (args.splice(args.indexOf('--timeline'), 1), true) : false;
const match = option('--match');
/** --callers TEXT: for the samples with a frame matching TEXT on their stack, their stacks from that frame up (callers), summed. */
const callers = option('--callers');
const callerStacks = new Map<string, number>();
const file = args[0];
if (!file) throw new Error('usage: tsx bench/cpu-profile-summary.ts <file.cpuprofile> [--per N] [--rows N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

/** A short place for a frame: the package in node_modules, else the path inside the project. */
function placeOf(url: string): string {
  if (!url) return '(native)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const project = url.match(/\/work\/[^/]+\/(.*)$/);
  return project ? project[1]! : url.replace(/^file:\/\//, '');
}
const isProject = (url: string) => Boolean(url) && !url.includes('/node_modules/') && !url.startsWith('node:');
const keyOf = ({ functionName, url, lineNumber }: CallFrame) =>
  `${functionName || '(anonymous)'} ${placeOf(url)}${url ? `:${lineNumber + 1}` : ''}`;
const ROOTS = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const inclusivePlace = new Map<string, number>();
const roots = new Map<string, number>();
let busyUs = 0;
/** Busy ms by second of the profile (--timeline): where the start-up ends and the rounds are. */
const busyBySecond: number[] = [];
let at = profile.startTime;
const skipUntil = profile.startTime + skipSeconds * 1e6;
for (let index = 0; index < profile.samples.length; index++) {
  const delta = profile.timeDeltas[index] ?? 0;
  at += delta;
  // A sample's time is the interval up to the next one (V8's own attribution).
  const us = profile.timeDeltas[index + 1] ?? 0;
  if (at < skipUntil) continue;
  const offset = (at - profile.startTime) / 1e6;
  if (windows.length && !windows.some(([from, to]) => offset >= from && offset < to)) continue;
  const leaf = byId.get(profile.samples[index]!)!;
  const leafName = leaf.callFrame.functionName;
  if (ROOTS.has(leafName)) {
    roots.set(leafName, (roots.get(leafName) ?? 0) + us);
    if (leafName !== '(garbage collector)') continue;
  }
  busyUs += us;
  const second = Math.floor((at - profile.startTime) / 1e6);
  busyBySecond[second] = (busyBySecond[second] ?? 0) + us / 1000;
  self.set(keyOf(leaf.callFrame), (self.get(keyOf(leaf.callFrame)) ?? 0) + us);
  if (callers) {
    const stack: string[] = [];
    for (let id: number | undefined = leaf.id; id !== undefined; id = parentOf.get(id)) {
      const frame = byId.get(id)!.callFrame;
      if (!ROOTS.has(frame.functionName)) stack.push(keyOf(frame));
    }
    const at = stack.findIndex((key) => key.includes(callers));
    if (at >= 0) {
      const chain = stack.slice(at, at + 12).join(' < ');
      callerStacks.set(chain, (callerStacks.get(chain) ?? 0) + us);
    }
  }
  const seen = new Set<string>();
  const seenPlaces = new Set<string>();
  for (let id: number | undefined = leaf.id; id !== undefined; id = parentOf.get(id)) {
    const frame = byId.get(id)!.callFrame;
    if (ROOTS.has(frame.functionName)) continue;
    const key = keyOf(frame);
    if (!seen.has(key)) {
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
    const place = placeOf(frame.url);
    if (!seenPlaces.has(place)) {
      seenPlaces.add(place);
      inclusivePlace.set(place, (inclusivePlace.get(place) ?? 0) + us);
    }
  }
}

const ms = (us: number) => (us / 1000).toFixed(1).padStart(9);
const share = (us: number) => `${((100 * us) / busyUs).toFixed(1).padStart(5)}%`;
const perN = (us: number) => (per ? `${(us / 1000 / per).toFixed(3).padStart(8)} ms/N` : '');
const table = (title: string, entries: Iterable<[string, number]>, filter: (key: string) => boolean = () => true) => {
  console.log(`\n## ${title}`);
  [...entries]
    .filter(([key]) => filter(key))
    .sort((a, b) => b[1] - a[1])
    .slice(0, rows)
    .forEach(([key, us]) => console.log(`${ms(us)} ms ${share(us)} ${perN(us)}  ${key}`));
};

if (timeline)
  console.log(
    `busy ms by second: ${Array.from(busyBySecond, (value, second) => `${second}:${Math.round(value ?? 0)}`).join(' ')}`,
  );
console.log(`${file}: busy ${ms(busyUs)} ms ${perN(busyUs)} (GC included)`);
console.log(
  `roots: ${[...roots].map(([name, us]) => `${name} ${(us / 1000).toFixed(0)} ms`).join(', ')}; skipped ${skipSeconds} s`,
);
table(
  'Self time by package or file',
  groupBy(self, (key) => key.split(' ').slice(1).join(' ').replace(/:\d+$/, '')),
);
table('Self time by function', self);
table('Inclusive time by package or file (a sample counted once per place on its stack)', inclusivePlace);
const projectKeys = new Set(
  profile.nodes.filter((node) => isProject(node.callFrame.url)).map((node) => keyOf(node.callFrame)),
);
table(
  "Inclusive time of the project's own functions",
  inclusive,
  (key) => projectKeys.has(key) && (!match || key.includes(match)),
);
if (callers) table(`Callers of ${callers} (its frame first, then up to 11 callers)`, callerStacks);
if (match) table(`Inclusive time of every function matching ${match}`, inclusive, (key) => key.includes(match));

function groupBy(map: Map<string, number>, group: (key: string) => string): Map<string, number> {
  const grouped = new Map<string, number>();
  for (const [key, us] of map) grouped.set(group(key), (grouped.get(group(key)) ?? 0) + us);
  return grouped;
}
