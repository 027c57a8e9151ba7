// `npm run bench:contacts`: the calling list at volume, on real servers started for the run (as in the
// tests). Writes bench/results/contacts.json and .md.
//  1. 10,000 contacts in one POST /campaigns/{id}/contacts (new phones, then the same phones again),
//     next to a plain multi-row INSERT of the same rows into a bare table, in the same run.
//  2. A campaign of START_CONTACTS contacts started: time to the accepted answer, and to the last lead
//     enrolled, with the production worker in its own process dialing the simulated provider.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../api/app';
import { benchTemporalServices } from './bench-app-services';
import { createDatabase } from '../lib/database';
import { createSqlPool } from '../lib/sql-pool';
import { addMember, createApiKey, createWorkspace } from '../lib/door/workspace-admin';
import { startTestStack } from '../scripts/stack/ephemeral-stack';
import { ensureDatabase } from '../scripts/stack/postgres';
import { startBenchWorker } from './bench-process';
import { writeBenchResults } from './results-files';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const START_CONTACTS = Number(process.env.BENCH_START_CONTACTS ?? 100_000);
const CAP = Number(process.env.BENCH_CAP ?? 1000);
/** The drain is paced by dialing; past this the run reports how far it got instead of the last lead. */
const DRAIN_SECONDS = Number(process.env.BENCH_DRAIN_SECONDS ?? 900);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) =>
  Number([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!.toFixed(1));

const { stack, stop } = await startTestStack();
try {
  await ensureDatabase(stack.postgresAdminUrl, 'bench', stack.templateDatabase);
  const databaseUrl = stack.postgresAdminUrl.replace(/\/postgres$/, '/bench');
  const db = createDatabase(databaseUrl, { poolSize: 10 });
  const sql = createSqlPool(databaseUrl, 10);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection });
  const taskQueue = `bench-${randomUUID()}`;
  const { id: workspaceId } = await createWorkspace(db, 'Bench', { rateLimitPerMinute: 1_000_000 });
  const { key } = await createApiKey(db, (await addMember(db, workspaceId, 'bench@bench.localhost', 'owner')).id, {
    scopes: ['campaigns.edit', 'campaigns.view'],
  });
  const services = benchTemporalServices({
    db,
    sql,
    temporal,
    temporalConnection: connection,
    taskQueue,
    exports: {
      dir: path.join(os.tmpdir(), 'bench-exports'),
      inlineMaxRows: 5000,
      retentionSeconds: 86_400,
      pageRows: 5000,
    },
  });
  const server = createApp(services).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const post = async (pathname: string, body: unknown) => {
    const response = await fetch(`${apiUrl}${pathname}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const newCampaign = () =>
    db.campaign.create({
      data: {
        workspaceId,
        name: 'Bench',
        maxConcurrentCalls: CAP,
        dialLadder: {
          rungs: [{ delaySeconds: 0 }],
          outcomes: {
            answered: 'end',
            busy: 'next',
            no_answer: 'next',
            voicemail: 'next',
            failed: 'next',
            invalid_number: 'end',
          },
        },
        callingWindow: { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] },
      },
    });
  let phoneSeed = 2_000_000;
  const contactsOf = (count: number) =>
    Array.from({ length: count }, () => {
      const phone = `+1415${String(phoneSeed++).padStart(7, '0')}`;
      return { phone, name: `Contact ${phone.slice(-4)}`, metadata: { plan: 'pro', source: 'bench' } };
    });

  // 1. Ten thousand contacts, alternating with the baseline.
  await sql.query('CREATE TABLE bench_plain (id uuid, "workspaceId" uuid, phone text, name text, metadata jsonb)');
  const timings = { newPhones: [] as number[], samePhones: [] as number[], plainInsert: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const contacts = contactsOf(10_000);
    let began = performance.now();
    await post(`/campaigns/${(await newCampaign()).id}/contacts`, { contacts });
    timings.newPhones.push(performance.now() - began);
    began = performance.now();
    await post(`/campaigns/${(await newCampaign()).id}/contacts`, { contacts });
    timings.samePhones.push(performance.now() - began);
    const values = contacts.flatMap((contact) => [contact.phone, contact.name, JSON.stringify(contact.metadata)]);
    const rows = contacts
      .map(
        (_, index) =>
          `(gen_random_uuid(), '${workspaceId}', $${index * 3 + 1}, $${index * 3 + 2}, $${index * 3 + 3}::jsonb)`,
      )
      .join(',');
    began = performance.now();
    await sql.query(`INSERT INTO bench_plain VALUES ${rows}`, values);
    timings.plainInsert.push(performance.now() - began);
  }
  console.error('10k contacts', timings);

  // 2. A large campaign started.
  const big = await newCampaign();
  for (let offset = 0; offset < START_CONTACTS; offset += 10_000)
    await post(`/campaigns/${big.id}/contacts`, { contacts: contactsOf(Math.min(10_000, START_CONTACTS - offset)) });
  const worker = startBenchWorker({
    databaseUrl,
    temporalAddress: stack.temporalAddress,
    taskQueue,
    bundlePath: stack.workflowBundlePath,
  });
  await sleep(4_000);
  const startBegan = performance.now();
  await post(`/campaigns/${big.id}/start`, {});
  const acceptedMs = performance.now() - startBegan;
  let firstLeadMs: number | null = null;
  let remaining = START_CONTACTS;
  while (remaining > 0 && performance.now() - startBegan < DRAIN_SECONDS * 1000) {
    await sleep(1_000);
    remaining = await db.campaignContact.count({ where: { campaignId: big.id, enrolledAt: null } });
    if (firstLeadMs === null && remaining < START_CONTACTS) firstLeadMs = performance.now() - startBegan;
  }
  const drainedSeconds = (performance.now() - startBegan) / 1000;
  const enrolled = START_CONTACTS - remaining;
  const { peakRssMb } = worker.memory();
  const completed = await db.lead.count({ where: { campaignId: big.id, status: 'completed' } });
  worker.stop();

  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version },
    tenThousandContacts: {
      rounds: ROUNDS,
      newPhonesMedianMs: median(timings.newPhones),
      samePhonesMedianMs: median(timings.samePhones),
      plainInsertMedianMs: median(timings.plainInsert),
      goalUnderMs: 500,
    },
    campaignStart: {
      contacts: START_CONTACTS,
      maxConcurrentCalls: CAP,
      acceptedMs: Number(acceptedMs.toFixed(1)),
      firstLeadMs: firstLeadMs && Number(firstLeadMs.toFixed(0)),
      enrolled,
      lastLeadEnrolledSeconds: remaining === 0 ? Number(drainedSeconds.toFixed(1)) : null,
      measuredForSeconds: Number(drainedSeconds.toFixed(1)),
      enrolledPerSecond: Math.round(enrolled / drainedSeconds),
      completed,
      workerPeakRssMb: peakRssMb,
    },
  };
  const t = result.tenThousandContacts;
  const s = result.campaignStart;
  writeBenchResults('contacts', result, [
    `# Calling list benchmark (${result.measuredAt})`,
    '',
    `${os.cpus().length} CPUs shared by PostgreSQL, the Temporal dev server, the API, the worker and the load.`,
    '',
    '| 10,000 contacts (median of ' + ROUNDS + ') | ms |',
    '|-|-|',
    `| POST /campaigns/{id}/contacts, new phones (end to end: 1 MB JSON, validation, one statement) | ${t.newPhonesMedianMs} |`,
    `| POST /campaigns/{id}/contacts, phones already workspace contacts | ${t.samePhonesMedianMs} |`,
    `| baseline: plain multi-row INSERT of the same rows into a bare table | ${t.plainInsertMedianMs} |`,
    '',
    `- Goal: under 500 ms for 10,000 contacts.`,
    `- A campaign of ${s.contacts} contacts (cap ${s.maxConcurrentCalls} calls in flight): start accepted in ${s.acceptedMs} ms; first lead ${s.firstLeadMs} ms after; ` +
      (s.lastLeadEnrolledSeconds !== null
        ? `last lead enrolled ${s.lastLeadEnrolledSeconds} s after the start`
        : `${s.enrolled} leads enrolled (${s.completed} dialed to completion) when the measurement stopped after ${s.measuredForSeconds} s; the last lead was not reached`) +
      ` (${s.enrolledPerSecond} leads/s, paced by the dialing); worker peak RSS ${s.workerPeakRssMb} MB.`,
    '',
  ]);
  console.log(JSON.stringify(result));
  server.close();
  await services.leadDispatcher.stop();
  await sql.end();
  await db.$disconnect();
  await connection.close();
} finally {
  await stop();
}
process.exit(0);
