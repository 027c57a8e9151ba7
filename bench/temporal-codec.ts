// The Temporal payload codec's cost per payload (docs/temporal-ui.md#cost): a payload converted as every client and
// worker converts it (JSON to a Payload and back: the baseline, no codec) against the same with the codec's seal and
// open in between (lib/temporal/payload-codec.ts), for a 1 KB and a 64 KB payload, in alternating rounds of one run.
// npm run bench:temporal-codec writes bench/results/temporal-codec.md and .json.
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { median } from './alternating-rounds';
import { benchMachine, writeBenchResults } from './results-files';
import { keyringSchema, newKeyringEntry } from '../lib/secrets/keyring';
import { EncryptionCodec } from '../lib/temporal/payload-codec';

const SIZES = [1024, 64 * 1024] as const;
const ROUNDS = 7;
const codec = new EncryptionCodec(keyringSchema.parse(`${newKeyringEntry('current')},${newKeyringEntry('old')}`));

/** A lead-like value whose JSON is about `bytes` long. */
const valueOf = (bytes: number) => ({ phone: '+14155550123', name: 'Ada Lovelace', notes: 'n'.repeat(bytes - 60) });

type Variant = 'baseline' | 'codec';
const roundTrip: Record<Variant, (value: unknown) => Promise<unknown>> = {
  baseline: async (value) => defaultPayloadConverter.fromPayload(defaultPayloadConverter.toPayload(value)),
  codec: async (value) => {
    const [sealed] = await codec.encode([defaultPayloadConverter.toPayload(value)]);
    const [opened] = await codec.decode([sealed as Payload]);
    return defaultPayloadConverter.fromPayload(opened as Payload);
  },
};

/** Microseconds per payload over `count` round trips. */
async function measure(variant: Variant, value: unknown, count: number): Promise<number> {
  const started = process.hrtime.bigint();
  for (let index = 0; index < count; index++) await roundTrip[variant](value);
  return Number(process.hrtime.bigint() - started) / 1000 / count;
}

const results = [];
for (const bytes of SIZES) {
  const value = valueOf(bytes);
  const payloadBytes = defaultPayloadConverter.toPayload(value).data!.length;
  const count = bytes <= 1024 ? 20_000 : 2_000;
  for (const variant of ['baseline', 'codec'] as const) await measure(variant, value, count);
  const runs: Record<Variant, number[]> = { baseline: [], codec: [] };
  for (let round = 0; round < ROUNDS; round++)
    for (const variant of round % 2 ? (['codec', 'baseline'] as const) : (['baseline', 'codec'] as const))
      runs[variant].push(await measure(variant, value, count));
  const baseline = median(runs.baseline);
  const withCodec = median(runs.codec);
  results.push({
    payloadBytes,
    count,
    baselineMicros: baseline,
    codecMicros: withCodec,
    codecExtraMicros: withCodec - baseline,
    runs,
  });
  console.error(`${payloadBytes} B: baseline ${baseline.toFixed(1)} us, codec ${withCodec.toFixed(1)} us`);
}

const machine = benchMachine();
const round1 = (value: number) => value.toFixed(1);
writeBenchResults('temporal-codec', { machine, rounds: ROUNDS, results }, [
  '# Temporal payload codec: cost per payload',
  '',
  `Measured ${new Date().toISOString()} on ${machine.cpus} CPUs (${machine.model}), Node ${machine.node}, load ${machine.loadAverage.map(round1).join(' ')}.`,
  `One payload converted to JSON and back (baseline, no codec) and the same sealed and opened by the codec in between`,
  `(encode + decode, AES-256-GCM), median of ${ROUNDS} alternating rounds, microseconds per payload.`,
  '',
  '| payload | baseline (µs) | with codec (µs) | codec adds (µs) |',
  '| ---: | ---: | ---: | ---: |',
  ...results.map(
    (result) =>
      `| ${result.payloadBytes} B | ${round1(result.baselineMicros)} | ${round1(result.codecMicros)} | ${round1(result.codecExtraMicros)} |`,
  ),
  '',
]);
