// `npm run bench:previews`: what a voice preview costs, uncached (espeak-ng + lame) and cached (a file of
// the content-addressed cache), next to a static file of the same size served by the same app in the same
// run: once behind the same door (key check and rate limit, the preview's own door) and once bare.
// One request at a time, the three cached variants interleaved request by request. Real PostgreSQL.
// Writes bench/results/previews.json and bench/results/previews.md.
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { z } from 'zod';
import { createApp } from '../api/app';
import { registerRoutes } from '../api/http/register-routes';
import { defineRoute } from '../api/http/route';
import { voicePreviewsFromConfig } from '../api/voices/voice-previews';
import { createDatabase } from '../lib/database';
import { addMember, createApiKey, createWorkspace } from '../lib/door/workspace-admin';
import { benchAppServices } from './bench-app-services';
import { measure } from './measure';
import { startBenchPostgres } from './bench-postgres';
import { writeBenchResults } from './results-files';

const UNCACHED = Number(process.env.BENCH_UNCACHED ?? 30);
const CACHED = Number(process.env.BENCH_CACHED ?? 500);
const VOICE = 'espeak-ng/en-us';

const bench = await startBenchPostgres('bench-previews-');
const workDir = bench.workDir;
try {
  const db = createDatabase(bench.url, { poolSize: 10 });
  const { id: workspaceId } = await createWorkspace(db, 'Bench', { rateLimitPerMinute: 1_000_000 });
  const { id: memberId } = await addMember(db, workspaceId, 'bench@bench.localhost', 'owner');
  const { key } = await createApiKey(db, memberId, { scopes: ['agents.view'] });

  const cacheDir = path.join(workDir, 'voice-previews');
  const { services, close } = await benchAppServices(db, bench.url, {
    voicePreviews: voicePreviewsFromConfig({
      ESPEAK_NG_PATH: 'espeak-ng',
      LAME_PATH: 'lame',
      SPEECH_TIMEOUT_MS: 10_000,
      PREVIEW_CACHE_DIR: cacheDir,
      PREVIEW_CACHE_MAX_FILES: 500,
      VOICE_PREVIEW_SYNTHESIZER: 'espeak-ng',
      POLLY_REGION: 'us-east-1',
    }),
  });

  // The same app, with two routes of the bench in front: a static file of the preview's size, behind the door and bare.
  const staticFile = path.join(workDir, 'static.mp3');
  const sendStatic = (res: express.Response) =>
    new Promise<{ status: number }>((resolve, reject) =>
      res.sendFile(
        staticFile,
        {
          headers: { 'Content-Type': 'audio/mpeg' },
          acceptRanges: false,
          lastModified: false,
          cacheControl: false,
        },
        (error) => (error ? reject(error) : resolve({ status: 200 })),
      ),
    );
  const app = express();
  app.get('/bench/static-bare.mp3', (_req, res) => void sendStatic(res));
  registerRoutes(
    app,
    [
      defineRoute({
        method: 'get',
        path: '/bench/static-door.mp3',
        access: { permission: 'agents.view' },
        summary: 'bench only',
        params: z.object({}),
        handler: async ({ res }) => sendStatic(res),
      }),
    ],
    services,
  );
  app.use(createApp(services));
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const previewUrl = `${base}/voices/${encodeURIComponent(VOICE)}/preview`;

  const get = async (url: string) => {
    const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    const body = await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${url}: ${response.status} ${Buffer.from(body).toString()}`);
    return body.byteLength;
  };

  // Uncached: the cache emptied before each request, so each one runs espeak-ng and lame.
  const clearCache = () => {
    for (const name of readdirSync(cacheDir, { withFileTypes: true }).map((entry) => entry.name))
      rmSync(path.join(cacheDir, name), { force: true });
  };
  const previewBytes = await get(previewUrl); // creates the directory, reads the synthesiser version once
  const uncached = await measure(UNCACHED, 1, async () => {
    clearCache();
    await get(previewUrl);
  });

  // Cached: the preview's file is in the cache; the static file has exactly its size.
  await get(previewUrl);
  const cachedFile = path.join(
    cacheDir,
    readdirSync(cacheDir).find((name) => name.endsWith('.mp3'))!,
  );
  writeFileSync(staticFile, Buffer.alloc(statSync(cachedFile).size, 0x55));
  const variants = {
    cached: previewUrl,
    staticBehindDoor: `${base}/bench/static-door.mp3`,
    staticBare: `${base}/bench/static-bare.mp3`,
  } as const;
  for (const url of Object.values(variants)) for (let index = 0; index < 50; index++) await get(url); // warm-up
  const latencies: Record<keyof typeof variants, number[]> = { cached: [], staticBehindDoor: [], staticBare: [] };
  for (let index = 0; index < CACHED; index++) {
    for (const [variant, url] of Object.entries(variants) as Array<[keyof typeof variants, string]>) {
      const started = performance.now();
      await get(url);
      latencies[variant].push(performance.now() - started);
    }
  }
  const summary = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (p: number) => Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!.toFixed(2));
    return { count: values.length, p50Ms: at(0.5), p99Ms: at(0.99) };
  };
  const cached = summary(latencies.cached);
  const staticBehindDoor = summary(latencies.staticBehindDoor);
  const staticBare = summary(latencies.staticBare);

  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
    setup: { voice: VOICE, previewBytes, uncachedRequests: UNCACHED, cachedRequests: CACHED, concurrency: 1 },
    goals: { cachedWithinTimesStatic: 2, uncachedP50UnderMs: 1500 },
    uncached: { count: uncached.count, p50Ms: uncached.p50Ms, p99Ms: uncached.p99Ms },
    cached,
    staticBehindDoor,
    staticBare,
    cachedOverStaticBehindDoorP50: Number((cached.p50Ms / staticBehindDoor.p50Ms).toFixed(2)),
    cachedOverStaticBareP50: Number((cached.p50Ms / staticBare.p50Ms).toFixed(2)),
  };
  writeBenchResults('previews', result, [
    `# Voice preview benchmark (${result.measuredAt})`,
    '',
    `GET /voices/{id}/preview of ${VOICE} (${previewBytes} bytes of MP3), one request at a time, through fetch on loopback, real PostgreSQL behind the door. ` +
      `Uncached: the cache emptied before each of ${UNCACHED} requests (espeak-ng, then lame). Cached: ${CACHED} requests interleaved with a static file of the same size ` +
      `served by the same app, behind the same door (agents.view) and bare. ${result.machine.cpus} CPUs shared by server, PostgreSQL and client; Node ${process.version}.`,
    '',
    '| variant | requests | p50 ms | p99 ms |',
    '|-|-|-|-|',
    `| preview, uncached | ${uncached.count} | ${uncached.p50Ms} | ${uncached.p99Ms} |`,
    `| preview, cached | ${cached.count} | ${cached.p50Ms} | ${cached.p99Ms} |`,
    `| static file, same door | ${staticBehindDoor.count} | ${staticBehindDoor.p50Ms} | ${staticBehindDoor.p99Ms} |`,
    `| static file, no door | ${staticBare.count} | ${staticBare.p50Ms} | ${staticBare.p99Ms} |`,
    '',
    `- Cached at p50: ${result.cachedOverStaticBehindDoorP50}x the static file behind the same door, ${result.cachedOverStaticBareP50}x the bare static file (goal: within 2x).`,
    `- Uncached at p50: ${uncached.p50Ms} ms (goal: under 1500 ms).`,
    '',
  ]);
  console.log(JSON.stringify(result));
  server.close();
  await services.leadDispatcher.stop();
  await db.$disconnect();
  await close();
} finally {
  await bench.stop();
}
process.exit(0);
