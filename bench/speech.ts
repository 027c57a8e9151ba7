// `npm run bench:speech`: what speech analysis of one recording costs on this machine. The espeak-ng sales call
// of test/support/sales-conversation.ts (about 33 s of audio) is analysed BENCH_SPEECH_RECORDINGS times at each
// concurrency of BENCH_SPEECH_CONCURRENCY (comma-separated): sox decodes and normalises it, pocketsphinx
// transcribes it (a child process a recording), the scorecard scores it. Throughput is seconds of audio analysed
// per second of wall clock (so also minutes of audio per minute) and recordings per minute; memory is the peak
// resident set (VmHWM) of each pocketsphinx child, sampled every 20 ms. No database, no Temporal.
// Writes bench/results/speech.json and bench/results/speech.md.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { normaliseRecording } from '../lib/speech/normalise-recording';
import { PocketsphinxTranscriber } from '../lib/speech/pocketsphinx';
import { scorecardSchema } from '../lib/speech/scorecard';
import { scoreSpeech } from '../lib/speech/speech-score';
import { wordErrorRate } from '../lib/speech/word-error-rate';
import { makeSalesCallRecording } from '../test/support/sales-conversation';
import { memoryOf } from './measure';
import { writeBenchResults } from './results-files';

const RECORDINGS = Number(process.env.BENCH_SPEECH_RECORDINGS ?? 6);
const CONCURRENCIES = (process.env.BENCH_SPEECH_CONCURRENCY ?? '1,2').split(',').map(Number);
const SOX = { soxPath: 'sox', timeoutMs: 60_000 };
const SAMPLE_MS = 20;

/** CPU seconds of this process's children that have ended and been waited for (Linux /proc, cutime + cstime). */
function childrenCpuSeconds(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // After "pid (comm) ", field 3 (state) is index 0: cutime is field 16, cstime field 17.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

const round = (value: number, digits = 2) => Number(value.toFixed(digits));
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-speech-'));
try {
  const recording = await makeSalesCallRecording(dir);
  const audioSecs = recording.durationMs / 1000;
  const scorecard = scorecardSchema.parse({
    keywords: ['solar', 'panels', 'installation', 'price', 'dollars', 'email'],
    phrases: ['free installation', 'no money down', 'thank you for your time'],
  });

  const runs = [];
  let lastWer = 0;
  let engine = '';
  for (const concurrency of CONCURRENCIES) {
    const peaksMb: number[] = [];
    const normaliseMs: number[] = [];
    const transcribeMs: number[] = [];
    const analysisMs: number[] = [];
    let next = 0;
    const cpuBefore = childrenCpuSeconds();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async (_, lane) => {
        while (next < RECORDINGS) {
          const index = next++;
          let peakMb = 0;
          let sampler: NodeJS.Timeout | undefined;
          const transcriber = new PocketsphinxTranscriber({
            onSpawn: (pid) => {
              const sample = () => {
                try {
                  peakMb = Math.max(peakMb, memoryOf(pid, (file) => readFileSync(file, 'utf8')).peakRssMb);
                } catch {
                  // The process has ended between two samples.
                }
              };
              sample();
              sampler = setInterval(sample, SAMPLE_MS);
            },
          });
          const begin = performance.now();
          const normalised = await normaliseRecording(recording.wavPath, path.join(dir, `lane-${lane}-${index}.wav`), {
            sox: SOX,
          });
          const decoded = performance.now();
          const transcription = await transcriber.transcribe(normalised.wavPath, { language: 'en-US' });
          clearInterval(sampler);
          const transcribed = performance.now();
          scoreSpeech(transcription.words, normalised.durationMs, scorecard);
          const done = performance.now();
          lastWer = wordErrorRate(recording.script, transcription.text).wer;
          engine = transcription.engine;
          normaliseMs.push(decoded - begin);
          transcribeMs.push(transcribed - decoded);
          analysisMs.push(done - begin);
          peaksMb.push(peakMb);
        }
      }),
    );
    const wallSecs = (performance.now() - started) / 1000;
    const cpuSecs = childrenCpuSeconds() - cpuBefore;
    runs.push({
      concurrency,
      recordings: RECORDINGS,
      wallSecs: round(wallSecs),
      audioSecsPerWallSec: round((RECORDINGS * audioSecs) / wallSecs),
      recordingsPerMinute: round((RECORDINGS * 60) / wallSecs),
      childCpuSecs: round(cpuSecs),
      audioSecsPerCpuSec: round((RECORDINGS * audioSecs) / cpuSecs),
      analysisP50Ms: Math.round(percentile(analysisMs, 0.5)),
      normaliseP50Ms: Math.round(percentile(normaliseMs, 0.5)),
      transcribeP50Ms: Math.round(percentile(transcribeMs, 0.5)),
      recogniserPeakRssMb: Math.max(...peaksMb),
    });
  }

  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
    setup: {
      engine,
      audioSecs,
      wordErrorRate: round(lastWer, 3),
      recordings: RECORDINGS,
      concurrencies: CONCURRENCIES,
    },
    runs,
  };
  writeBenchResults('speech', result, [
    `# Speech analysis benchmark (${result.measuredAt})`,
    '',
    `The espeak-ng sales call of test/support/sales-conversation.ts (${audioSecs} s of audio, ${result.setup.wordErrorRate} word error rate), analysed ${RECORDINGS} times at each concurrency: sox decodes and normalises it to 16 kHz mono, ${engine} transcribes it in a child process, the scorecard scores it. Throughput is seconds of audio analysed per second of wall clock (the same as minutes of audio per minute); CPU is the children's (sox and pocketsphinx); memory is the largest VmHWM of a pocketsphinx child, sampled every ${SAMPLE_MS} ms. ${result.machine.cpus} CPUs shared with other work on the machine; Node ${process.version}.`,
    '',
    '| concurrency | recordings | wall s | audio s / wall s | recordings / min | audio s / CPU s | analysis p50 ms | sox p50 ms | pocketsphinx p50 ms | recogniser peak RSS MB |',
    '|-|-|-|-|-|-|-|-|-|-|',
    ...runs.map(
      (run) =>
        `| ${run.concurrency} | ${run.recordings} | ${run.wallSecs} | ${run.audioSecsPerWallSec} | ${run.recordingsPerMinute} | ${run.audioSecsPerCpuSec} | ${run.analysisP50Ms} | ${run.normaliseP50Ms} | ${run.transcribeP50Ms} | ${run.recogniserPeakRssMb} |`,
    ),
    '',
  ]);
  console.log(JSON.stringify(result, null, 2));
} finally {
  await rm(dir, { recursive: true, force: true });
}
