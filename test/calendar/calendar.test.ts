import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bookAppointment } from '../../activities/calendar/appointments';
import type { Carrier } from '../../lib/calls/carrier';
import { bookingKeyOf } from '../../lib/calendar/booking-key';
import { calendarClientOf } from '../../lib/calendar/calendar-clients';
import { connectCalendar, openCalendar, type CalendarEndpoints } from '../../lib/calendar/calendar-connection';
import { createCalendarTools } from '../../lib/calendar/calendar-tools';
import { spokenSlot } from '../../lib/calendar/spoken-slot';
import { createModelEngine } from '../../lib/conversation/model-engine';
import { prismaSql } from '../../lib/run-sql';
import { bookAppointmentDurably } from '../../lib/temporal/calendar';
import { startTestApi } from '../support/api';
import { insertAgent } from '../support/agents';
import { DEVELOPMENT_CALCOM_API_KEY, startCalcomTwin } from '../support/calcom-twin';
import { insertAnsweredCall } from '../support/calls';
import { startGoogleSheetsTwin } from '../support/google-sheets-twin';
import { useTestDatabase } from '../support/database';
import { testEgress } from '../support/egress';
import { TEST_KEYRING, TEST_SECRETS_KEYS } from '../support/keyring';
import { sealingAdminCli } from '../support/admin-cli';
import { OPENAI_TWIN_API_KEY, collect, recordingContext, startOpenAiTwin } from '../support/openai-twin';
import { startTestWorker, useTemporalClient } from '../support/temporal';
import { createTestWorkspace, type TestWorkspace } from '../support/workspace';

// One stack for the file: the API, a worker for the booking workflow, the Cal.com twin (its host in New York,
// Monday to Friday 09:00-17:00), the Google twin's Calendar API and the OpenAI twin; the lead is in Sydney.
const { db, url } = await useTestDatabase();
const temporal = await useTemporalClient();
const api = await startTestApi({ db, url, temporal });
const { twin: calcom, baseUrl: calcomUrl } = await startCalcomTwin();
const google = await startGoogleSheetsTwin();
const endpoints: CalendarEndpoints = { calcomTwinUrl: calcomUrl, googleCalendarTwinUrl: google.url };
const egress = testEgress();
await startTestWorker(temporal.taskQueue, {
  db,
  // The booking workflow places no call.
  calls: {} as Carrier,
  statusCallbackBaseUrl: 'http://127.0.0.1:9',
  calendarEndpoints: endpoints,
});
const { twin: model, baseURL } = await startOpenAiTwin();
const { admin, adminJson } = sealingAdminCli(url, TEST_SECRETS_KEYS);

const SYDNEY_PHONE = '+61293744000';
const LEAD_ZONE = 'Australia/Sydney';
const HOST_ZONE = 'America/New_York';

async function calendarWorkspace(scopes: string[] = []) {
  const owner = await createTestWorkspace(db, { scopes });
  await connectCalendar(db, TEST_KEYRING, endpoints, {
    workspaceId: owner.workspaceId,
    provider: 'calcom-twin',
    apiKey: DEVELOPMENT_CALCOM_API_KEY,
    eventTypeId: 1001,
  });
  return owner;
}

/** A call on, with its lead in Sydney. */
async function sydneyCall(owner: TestWorkspace) {
  const agent = await insertAgent(db, owner.workspaceId);
  const call = await insertAnsweredCall(db, owner, {
    agentId: agent.id,
    status: 'dialing',
    outcome: null,
    endedAt: null,
    durationMs: null,
  });
  await db.lead.update({ where: { id: call.leadId! }, data: { phone: SYDNEY_PHONE, name: 'Olivia' } });
  return call;
}

const toolsOf = (callId: string) =>
  createCalendarTools(
    {
      db,
      sql: prismaSql(db),
      keyring: TEST_KEYRING,
      egress,
      endpoints,
      // Generous on a loaded machine: the product waits BOOKING_WAIT_MS (20 s) on the line.
      book: (input) => bookAppointmentDurably(temporal.client, temporal.taskQueue, input, 120_000),
    },
    callId,
  );

/** The starts a check_availability answer offers, in order. */
const startsOf = (text: string) => [...text.matchAll(/\(start (\S+)\)/g)].map((match) => match[1]!);

const localHour = (iso: string, timeZone: string) =>
  Number(new Intl.DateTimeFormat('en-US', { timeZone, hour: 'numeric', hourCycle: 'h23' }).format(new Date(iso)));

/** Books `start` for the call: the read-back first, then the confirmed booking. */
async function bookConfirmed(tools: ReturnType<typeof toolsOf>, start: string) {
  const readBack = await tools.run({ name: 'book_appointment', toolCallId: 'a', arguments: { start } });
  expect(readBack.result).toMatch(/^Before booking, read this back/);
  return tools.run({ name: 'book_appointment', toolCallId: 'b', arguments: { start, confirmed: true } });
}

describe('appointments booked during a call', () => {
  it("offers, reads back and books a time in the lead's zone, far from the host's, exactly once", async () => {
    const owner = await calendarWorkspace();
    const call = await sydneyCall(owner);
    const context = recordingContext();
    context.tools = { ...context.tools, functions: toolsOf(call.id) };
    const engine = createModelEngine(context, {
      baseURL,
      apiKey: OPENAI_TWIN_API_KEY,
      model: 'gpt-twin',
      timeoutMs: 120_000,
    });
    const toolAnswer = () =>
      String((model.requests.at(-1)!.body.messages as Array<{ content?: unknown }>).at(-1)!.content);

    model.reset();
    model.script({ toolCalls: [{ name: 'check_availability', arguments: '{}' }] }, { content: 'I have a few times.' });
    await collect(engine.onPrompt('Can I book a meeting with you?'));
    const offered = model.requests[0]!.body.tools as Array<{ function: { name: string } }>;
    expect(offered.map((tool) => tool.function.name)).toEqual(
      expect.arrayContaining(['check_availability', 'book_appointment']),
    );
    const offer = toolAnswer();
    expect(offer).toContain(`in the lead's time zone (${LEAD_ZONE})`);
    const starts = startsOf(offer);
    expect(starts).toHaveLength(3);
    for (const start of starts) {
      // Spoken in Sydney (weekday, date, time, zone), inside the host's New York hours.
      expect(offer).toContain(spokenSlot(new Date(start), LEAD_ZONE, 'en-US'));
      expect(localHour(start, HOST_ZONE)).toBeGreaterThanOrEqual(9);
      expect(localHour(start, HOST_ZONE)).toBeLessThan(17);
    }
    expect(offer).toMatch(/Australian Eastern (Daylight|Standard) Time/);
    expect(localHour(starts[0]!, LEAD_ZONE)).not.toBe(localHour(starts[0]!, HOST_ZONE));

    // Confirmed at once by the model: the product answers the read-back first all the same.
    const start = starts[0]!;
    model.script(
      { toolCalls: [{ name: 'book_appointment', arguments: JSON.stringify({ start, confirmed: true }) }] },
      { content: 'Just to confirm.' },
    );
    await collect(engine.onPrompt('The first one please'));
    expect(toolAnswer()).toContain(
      `read this back to the lead and ask them to confirm: "${spokenSlot(new Date(start), LEAD_ZONE, 'en-US')}"`,
    );
    expect(calcom.store.bookings()).toHaveLength(0);

    model.script(
      { toolCalls: [{ name: 'book_appointment', arguments: JSON.stringify({ start, confirmed: true }) }] },
      { content: 'You are booked.' },
    );
    await collect(engine.onPrompt('Yes, that is right'));
    expect(toolAnswer()).toMatch(/^Booked for .*\(Australia\/Sydney\)/);

    const key = bookingKeyOf(owner.workspaceId, call.id, new Date(start));
    const atProvider = calcom.store.bookings().filter((booking) => booking.metadata.bookingKey === key);
    expect(atProvider).toHaveLength(1);
    expect(atProvider[0]!.attendee).toMatchObject({ name: 'Olivia', timeZone: LEAD_ZONE, phoneNumber: SYDNEY_PHONE });
    expect(await db.appointment.findMany({ where: { callId: call.id } })).toEqual([
      expect.objectContaining({
        bookingKey: key,
        startsAt: new Date(start),
        timeZone: LEAD_ZONE,
        provider: 'calcom-twin',
      }),
    ]);
    expect((await db.call.findUniqueOrThrow({ where: { id: call.id } })).conversationOutcome).toBe(
      'appointment_booked',
    );

    // The same booking again (a retried tool call): looked up, not booked twice.
    const again = await toolsOf(call.id).run({
      name: 'book_appointment',
      toolCallId: 'c',
      arguments: { start, confirmed: true },
    });
    expect(again.result).toMatch(/^Already booked for/);
    expect(calcom.store.bookings().filter((booking) => booking.metadata.bookingKey === key)).toHaveLength(1);
  }, 240_000);

  it('gives two callers checking at once different times: one books a time, the other cannot take it', async () => {
    const owner = await calendarWorkspace();
    const [first, second] = [toolsOf((await sydneyCall(owner)).id), toolsOf((await sydneyCall(owner)).id)];
    const [a, b] = await Promise.all(
      [first, second].map((tools) => tools.run({ name: 'check_availability', toolCallId: 'x', arguments: {} })),
    );
    const [startsA, startsB] = [startsOf(a!.result), startsOf(b!.result)];
    expect(startsA).toHaveLength(3);
    expect(startsB).toHaveLength(3);
    expect(startsA.filter((start) => startsB.includes(start))).toEqual([]);

    const taken = await second.run({
      name: 'book_appointment',
      toolCallId: 'y',
      arguments: { start: startsA[0], confirmed: true },
    });
    expect(taken).toMatchObject({ ok: false, result: expect.stringMatching(/not held for this call/) });
    expect((await bookConfirmed(first, startsA[0]!)).result).toMatch(/^Booked for/);
    expect((await bookConfirmed(second, startsB[0]!)).result).toMatch(/^Booked for/);
    const booked = await db.appointment.findMany({ where: { workspaceId: owner.workspaceId } });
    expect(booked.map((row) => row.startsAt.toISOString()).sort()).toEqual([startsA[0], startsB[0]].sort());
  });

  it('ends with one appointment when the worker died between the booking at Cal.com and its record', async () => {
    const owner = await calendarWorkspace();
    const call = await sydneyCall(owner);
    const tools = toolsOf(call.id);
    const [start] = startsOf((await tools.run({ name: 'check_availability', toolCallId: 'x', arguments: {} })).result);
    const slotStart = new Date(start!);
    const key = bookingKeyOf(owner.workspaceId, call.id, slotStart);
    // What the activity's first try did before its worker died: booked at Cal.com under the key, recorded nothing.
    const hold = await db.calendarHold.findFirstOrThrow({ where: { callId: call.id, startsAt: slotStart } });
    const client = calendarClientOf((await openCalendar(db, TEST_KEYRING, owner.workspaceId))!, egress, endpoints);
    await client.release(hold.reservationUid!);
    await client.book(
      key,
      { start: slotStart, end: hold.endsAt },
      { name: 'Olivia', phone: SYDNEY_PHONE, timeZone: LEAD_ZONE, language: 'en-US' },
      'x',
    );

    expect((await bookConfirmed(tools, start!)).result).toMatch(/^Booked for/);
    // And the activity once more, as a retry would run it: the same appointment.
    const input = {
      workspaceId: owner.workspaceId,
      callId: call.id,
      start: start!,
      end: hold.endsAt.toISOString(),
      timeZone: LEAD_ZONE,
      reservationUid: null,
    };
    const retried = await bookAppointment(
      { db, egress, secretsKeyring: TEST_KEYRING, calendarEndpoints: endpoints },
      input,
    );
    expect(calcom.store.bookings().filter((booking) => booking.metadata.bookingKey === key)).toHaveLength(1);
    expect(await db.appointment.findMany({ where: { bookingKey: key } })).toEqual([
      expect.objectContaining({ id: retried.appointmentId, providerBookingId: retried.providerBookingId }),
    ]);
  });

  it("books on Google Calendar through a service account: the product's hold, the event's id the booking key", async () => {
    const owner = await createTestWorkspace(db);
    const key = await google.serviceAccount();
    const calendarId = `sales-${owner.workspaceId}@example.com`;
    const shared = await fetch(`${google.url}/control/calendars`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        calendarId,
        timeZone: HOST_ZONE,
        sharedWith: [{ email: key.client_email, role: 'writer' }],
      }),
    });
    expect(shared.status).toBe(201);
    await connectCalendar(db, TEST_KEYRING, endpoints, {
      workspaceId: owner.workspaceId,
      provider: 'google-calendar-twin',
      keyJson: JSON.stringify(key),
      calendarId,
      hostTimeZone: HOST_ZONE,
    });
    const [callA, callB] = [await sydneyCall(owner), await sydneyCall(owner)];
    const [first, second] = [toolsOf(callA.id), toolsOf(callB.id)];
    // Google has no hold: the product's own keeps two callers checking at once apart.
    const [a, b] = await Promise.all(
      [first, second].map((tools) => tools.run({ name: 'check_availability', toolCallId: 'x', arguments: {} })),
    );
    const [startsA, startsB] = [startsOf(a!.result), startsOf(b!.result)];
    expect(startsA).toHaveLength(3);
    expect(startsA.filter((start) => startsB.includes(start))).toEqual([]);
    for (const start of startsA) expect(localHour(start, HOST_ZONE)).toBeGreaterThanOrEqual(9);
    expect((await bookConfirmed(first, startsA[0]!)).result).toMatch(/^Booked for/);

    const bookingKey = bookingKeyOf(owner.workspaceId, callA.id, new Date(startsA[0]!));
    const eventsOf = async () =>
      (
        (await (await fetch(`${google.url}/control/calendars/${calendarId}/events`)).json()) as {
          events: Array<{ id: string }>;
        }
      ).events;
    expect((await eventsOf()).map((event) => event.id)).toEqual([bookingKey]);
    // Run again (a retry): the event is found by its id, not inserted twice.
    const input = {
      workspaceId: owner.workspaceId,
      callId: callA.id,
      start: startsA[0]!,
      end: new Date(Date.parse(startsA[0]!) + 30 * 60_000).toISOString(),
      timeZone: LEAD_ZONE,
      reservationUid: null,
    };
    await db.appointment.deleteMany({ where: { bookingKey } });
    await bookAppointment({ db, egress, secretsKeyring: TEST_KEYRING, calendarEndpoints: endpoints }, input);
    expect(await eventsOf()).toHaveLength(1);
    expect(await db.appointment.count({ where: { bookingKey, provider: 'google-calendar-twin' } })).toBe(1);
    // Once booked, the time is busy: a later check offers it to nobody.
    const later = await second.run({ name: 'check_availability', toolCallId: 'z', arguments: {} });
    expect(startsOf(later.result)).not.toContain(startsA[0]);
  });

  it('lists the appointments to calendar.view, with the call, the lead and the start in both zones', async () => {
    const owner = await calendarWorkspace(['calendar.view']);
    const stranger = await createTestWorkspace(db, { scopes: ['calls.view'] });
    const booked = [];
    for (let index = 0; index < 2; index += 1) {
      const call = await sydneyCall(owner);
      const tools = toolsOf(call.id);
      const [start] = startsOf(
        (await tools.run({ name: 'check_availability', toolCallId: 'x', arguments: {} })).result,
      );
      await bookConfirmed(tools, start!);
      booked.push({ callId: call.id, leadId: call.leadId, start: start! });
    }
    booked.sort((x, y) => x.start.localeCompare(y.start));

    const page = await api.request('GET', '/calendar/appointments?limit=1&offset=1', { key: owner.key });
    expect(page.status).toBe(200);
    const body = (await page.json()) as { items: Array<Record<string, unknown>>; total: number };
    expect(body.total).toBe(2);
    expect(body.items).toEqual([
      expect.objectContaining({
        callId: booked[1]!.callId,
        lead: { id: booked[1]!.leadId, name: 'Olivia', phone: SYDNEY_PHONE },
        start: booked[1]!.start,
        timeZone: LEAD_ZONE,
        localStart: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/),
        provider: 'calcom-twin',
        status: 'booked',
      }),
    ]);
    expect(localHour(booked[1]!.start, LEAD_ZONE)).toBe(Number((body.items[0]!.localStart as string).slice(11, 13)));

    const refused = await api.request('GET', '/calendar/appointments', { key: stranger.key });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'forbidden', requiredPermission: 'calendar.view' });
    const connection = await api.request('GET', '/calendar/connection', { key: owner.key });
    const shown = await connection.text();
    expect(JSON.parse(shown)).toMatchObject({ connection: { provider: 'calcom-twin', eventTypeId: 1001 } });
    expect(shown).not.toContain(DEVELOPMENT_CALCOM_API_KEY);
    const disconnect = await api.request('DELETE', '/calendar/connection', { key: owner.key });
    expect(await disconnect.json()).toMatchObject({ error: 'forbidden', requiredPermission: 'calendar.edit' });

    // The operator connects with the CLI, the key read from a file: never answered, never shown.
    const editor = await createTestWorkspace(db, { scopes: ['calendar.edit'] });
    const keyFile = path.join(os.tmpdir(), `calcom-key-${editor.workspaceId}`);
    writeFileSync(keyFile, 'cal_live_operator_secret_key');
    const connect = ['calendar', 'connect', '--workspace', editor.workspaceId, '--provider', 'calcom'];
    const made = await adminJson([...connect, '--api-key-file', keyFile, '--event-type-id', '77']);
    expect(made).toMatchObject({ provider: 'calcom', eventTypeId: 77 });
    expect(JSON.stringify(made)).not.toContain('cal_live_operator_secret_key');
    expect((await admin([...connect, '--event-type-id', '77'])).stderr).toMatch(/needs its API key/);
    const shownToEditor = await (await api.request('GET', '/calendar/connection', { key: editor.key })).text();
    expect(shownToEditor).not.toContain('cal_live_operator_secret_key');
    expect((await api.request('DELETE', '/calendar/connection', { key: editor.key })).status).toBe(204);
    expect(await db.calendarConnection.count({ where: { workspaceId: editor.workspaceId } })).toBe(0);
  });
});
