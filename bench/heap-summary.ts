// `tsx bench/heap-summary.ts <file.heapsnapshot> [rows] [per]`: what a V8 heap snapshot holds, summed by
// node type and constructor name (self sizes), largest first; with `per` (e.g. the runs the worker had
// cached) each sum is also divided by it. Snapshots of a worker with cached runs exceed what JSON.parse
// takes in one string, so the file's number arrays are scanned as bytes.
import { readFileSync } from 'node:fs';

interface Snapshot {
  meta: { node_fields: string[]; node_types: [string[], ...unknown[]] };
  nodes: Uint32Array;
  strings: string[];
}

/** The unsigned integers of the JSON array that starts after `key`, and where it ends. */
function integersAfter(buffer: Buffer, key: string, from: number): { values: Uint32Array; end: number } {
  let values = new Uint32Array(1 << 20);
  let length = 0;
  let value = 0;
  let inNumber = false;
  let at = buffer.indexOf(key, from) + key.length;
  for (; ; at++) {
    const byte = buffer[at]!;
    if (byte >= 48 && byte <= 57) {
      value = value * 10 + (byte - 48);
      inNumber = true;
      continue;
    }
    if (inNumber) {
      if (length === values.length) {
        const grown = new Uint32Array(values.length * 2);
        grown.set(values);
        values = grown;
      }
      values[length++] = value;
      value = 0;
      inNumber = false;
    }
    if (byte === 93 /* ] */) return { values: values.subarray(0, length), end: at };
  }
}

/** The snapshot's strings one by one (a few are whole scripts: only their start is kept). */
function stringsAfter(buffer: Buffer, from: number): string[] {
  const strings: string[] = [];
  let at = buffer.indexOf('"strings":[', from) + '"strings":['.length;
  for (;;) {
    while (buffer[at] !== 34 /* " */ && buffer[at] !== 93 /* ] */) at++;
    if (buffer[at] === 93) return strings;
    let end = at + 1;
    while (buffer[end] !== 34) end += buffer[end] === 92 /* \ */ ? 2 : 1;
    const raw = buffer.subarray(at, end + 1).toString();
    strings.push(raw.length > 2000 ? `(script) ${raw.slice(1, 80)}` : (JSON.parse(raw) as string));
    at = end + 1;
  }
}

function loadSnapshot(file: string): Snapshot {
  const buffer = readFileSync(file);
  const nodesAt = buffer.indexOf('"nodes":[');
  const header = JSON.parse(`{${buffer.subarray(1, nodesAt).toString().replace(/,\s*$/, '')}}`) as {
    snapshot: { meta: Snapshot['meta'] };
  };
  const nodes = integersAfter(buffer, '"nodes":[', nodesAt);
  const edges = integersAfter(buffer, '"edges":[', nodes.end);
  return { meta: header.snapshot.meta, nodes: nodes.values, strings: stringsAfter(buffer, edges.end) };
}

const STRING_TYPES = new Set(['string', 'concatenated string', 'sliced string']);

/** Self sizes and counts by "type name" (strings summed as one row). */
export function sumByConstructor(snapshot: Snapshot): Map<string, { count: number; bytes: number }> {
  const fields = snapshot.meta.node_fields;
  const [types] = snapshot.meta.node_types;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((field) => fields.indexOf(field));
  const sums = new Map<string, { count: number; bytes: number }>();
  for (let at = 0; at < snapshot.nodes.length; at += fields.length) {
    const type = types[snapshot.nodes[at + typeAt!]!]!;
    const name = STRING_TYPES.has(type) ? '' : snapshot.strings[snapshot.nodes[at + nameAt!]!]!.slice(0, 60);
    const key = `${type} ${name}`.trim();
    const sum = sums.get(key) ?? { count: 0, bytes: 0 };
    sum.count += 1;
    sum.bytes += snapshot.nodes[at + sizeAt!]!;
    sums.set(key, sum);
  }
  return sums;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, rows = '40', per] = process.argv.slice(2);
  if (!file) throw new Error('usage: tsx bench/heap-summary.ts <file.heapsnapshot> [rows] [per]');
  const sums = [...sumByConstructor(loadSnapshot(file))].sort((a, b) => b[1].bytes - a[1].bytes);
  const total = sums.reduce((sum, [, { bytes }]) => sum + bytes, 0);
  const divisor = Number(per ?? 1);
  console.log(
    `total ${(total / 2 ** 20).toFixed(1)} MB${per ? `, ${(total / divisor / 1024).toFixed(0)} KB per ${per}` : ''}`,
  );
  for (const [key, { count, bytes }] of sums.slice(0, Number(rows)))
    console.log(
      [
        `${(bytes / 2 ** 20).toFixed(2)} MB`.padStart(10),
        String(count).padStart(9),
        ...(per
          ? [`${(bytes / divisor / 1024).toFixed(1)} KB`.padStart(10), (count / divisor).toFixed(1).padStart(8)]
          : []),
        key,
      ].join('  '),
    );
}
