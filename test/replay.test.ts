import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Resource } from '@opentelemetry/resources';
import { NoopSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { describe, expect, inject, it } from 'vitest';
import { replayScenarios } from './replay/scenarios';
import { quietRuntime } from './support/temporal';
import { tracedBundlePath, tracingWorkerOptions } from '../worker/tracing-interceptors';

quietRuntime();

const historiesDir = path.join(import.meta.dirname, 'histories');
const historyFiles = readdirSync(historiesDir)
  .filter((file) => file.endsWith('.json'))
  .sort();

function loadHistory(file: string) {
  return JSON.parse(readFileSync(path.join(historiesDir, file), 'utf8')) as { events: Array<Record<string, any>> };
}

/** The payloads of the callEnded signals a history holds (EndedCall), in order. */
function callsEnded(history: { events: Array<Record<string, any>> }) {
  return history.events
    .map((event) => event.workflowExecutionSignaledEventAttributes)
    .filter((signal) => signal?.signalName === 'callEnded')
    .map((signal) => JSON.parse(Buffer.from(signal.input.payloads[0].data, 'base64').toString('utf8')));
}

/** The history with its events numbered 1, 2, … again (after one was taken out). */
function renumbered(history: { events: Array<Record<string, any>> }) {
  history.events.forEach((event, index) => (event.eventId = String(index + 1)));
  return history;
}

async function replay(
  histories: Array<{ workflowId: string; history: unknown }>,
  codePath = inject('stack').workflowBundlePath,
  sinks?: ReturnType<typeof tracingWorkerOptions>['sinks'],
) {
  const results = [];
  const replayable = histories.map(({ workflowId, history }) => ({ workflowId, history: historyFromJSON(history) }));
  for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath }, sinks }, replayable)) {
    results.push(result);
  }
  return results;
}

describe('recorded workflow histories', () => {
  it('has a committed history for every replay scenario', () => {
    expect(historyFiles).toEqual(replayScenarios.map((scenario) => `${scenario.name}.json`).sort());
  });

  it('replays every committed history against the current workflow code', async () => {
    const results = await replay(historyFiles.map((file) => ({ workflowId: file, history: loadHistory(file) })));
    expect(results).toHaveLength(historyFiles.length);
    for (const result of results) expect(result.error, result.workflowId).toBeUndefined();
  });

  it('replays runs of the lean ladder (leadLadderWorkflow) on every path the line queue gives it', () => {
    const leanLadder = historyFiles.filter(
      (file) =>
        loadHistory(file).events[0]!.workflowExecutionStartedEventAttributes.workflowType.name === 'leadLadderWorkflow',
    );
    expect(leanLadder).toEqual(
      expect.arrayContaining([
        'lead-ladder-answered.json',
        'lead-ladder-busy-full-ladder.json',
        'lead-ladder-do-not-call.json',
        'lead-ladder-paused-then-resumed.json',
        'lead-ladder-pushed-then-granted.json',
        'lead-ladder-queued-then-granted.json',
      ]),
    );
    // Queued, woken by lineGranted, dialed: the history holds that very path.
    const signals = loadHistory('lead-ladder-queued-then-granted.json')
      .events.map((event) => event.workflowExecutionSignaledEventAttributes?.signalName)
      .filter(Boolean);
    expect(signals).toEqual(['lineGranted', 'callEnded']);
  });

  it('holds runs of the lean ladder on the Twilio path (the twin): the script walk answered, a voicemail left', () => {
    const ended = (file: string) => callsEnded(loadHistory(file)).map((call) => call.outcome);
    expect(ended('lead-ladder-twilio-script-walk.json')).toEqual(['answered']);
    expect(ended('lead-ladder-twilio-voicemail-left.json')).toEqual(['voicemail_left']);
  });

  it('holds runs of the lean ladders after a conversation tool ended the call: a callback at its booked time, an opt-out, a transfer', () => {
    const typeOf = (file: string) =>
      loadHistory(file).events[0]!.workflowExecutionStartedEventAttributes.workflowType.name;
    const ended = (file: string) => callsEnded(loadHistory(file)).map((call) => call.outcome);
    expect(typeOf('lead-ladder-twilio-callback-at-booked-time.json')).toBe('leadLadderWorkflow');
    for (const file of [
      'lead-ladder-v2-twilio-callback-at-booked-time.json',
      'lead-ladder-v2-twilio-opted-out.json',
      'lead-ladder-v2-twilio-transferred.json',
    ])
      expect(typeOf(file), file).toBe('leadLadderWorkflowV2');
    expect(ended('lead-ladder-v2-twilio-opted-out.json')).toEqual(['opted_out']);
    expect(ended('lead-ladder-v2-twilio-transferred.json')).toEqual(['transferred']);
    for (const file of [
      'lead-ladder-v2-twilio-callback-at-booked-time.json',
      'lead-ladder-twilio-callback-at-booked-time.json',
    ]) {
      const { events } = loadHistory(file);
      // A one-rung ladder: the callback is a second attempt past its last rung, which the lead answers.
      expect(ended(file), file).toEqual(['callback_requested', 'answered']);
      const [{ callbackAt }] = callsEnded({ events });
      // The wait after the first call's end is a timer that fires at the time booked.
      const signalled = events.findIndex((event) => event.workflowExecutionSignaledEventAttributes);
      const timer = events.slice(signalled).find((event) => event.timerStartedEventAttributes)!;
      const firesAt =
        Date.parse(timer.eventTime) + parseFloat(timer.timerStartedEventAttributes.startToFireTimeout) * 1000;
      expect(Math.abs(firesAt - Date.parse(callbackAt)), file).toBeLessThan(1_000);
      expect(events.at(-1)!.workflowExecutionCompletedEventAttributes, file).toBeDefined();
    }
  });

  it('fails with a determinism violation when a booked callback no longer gives its lead the next attempt', async () => {
    const history = loadHistory('lead-ladder-v2-twilio-callback-at-booked-time.json');
    // As if the call had ended callback_requested without a time: on a one-rung ladder that ends the run, where the
    // recorded run waited for the time booked and called again.
    const signal = history.events.find(
      (event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'callEnded',
    )!.workflowExecutionSignaledEventAttributes;
    const { callbackAt, ...withoutTime } = callsEnded(history)[0];
    expect(callbackAt).toBeDefined();
    signal.input.payloads[0].data = Buffer.from(JSON.stringify(withoutTime)).toString('base64');
    const [result] = await replay([{ workflowId: 'altered-callback', history }]);
    expect(result?.error).toBeInstanceOf(DeterminismViolationError);
  });

  it('replays runs of its successor (leadLadderWorkflowV2), a busy last rung ended by the call end alone', () => {
    const typeOf = (file: string) =>
      loadHistory(file).events[0]!.workflowExecutionStartedEventAttributes.workflowType.name;
    const markers = (file: string) =>
      loadHistory(file).events.filter((event) => event.markerRecordedEventAttributes).length;
    const v2 = [
      'lead-ladder-v2-answered.json',
      'lead-ladder-v2-busy-full-ladder.json',
      'lead-ladder-v2-busy-settled-at-end.json',
    ];
    expect(v2.map(typeOf)).toEqual(v2.map(() => 'leadLadderWorkflowV2'));
    // The dial, and no settleLead: the call's end settled the lead. An answered call's aftermath is the ladder's.
    expect(markers('lead-ladder-v2-busy-settled-at-end.json')).toBe(1);
    expect(markers('lead-ladder-v2-answered.json')).toBe(2);
    // Three dials and the settleLeads of the two rungs before the last.
    expect(markers('lead-ladder-v2-busy-full-ladder.json')).toBe(5);
  });

  it("replays a journey's call node on each ladder it has started: the first, the lean one, the current one", () => {
    const childOf = (file: string) =>
      loadHistory(file)
        .events.map((event) => event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType.name)
        .filter(Boolean);
    expect(childOf('journey-call-branch-webhook-wait.json')).toEqual(['leadDialWorkflow']);
    expect(childOf('journey-call-branch-webhook-wait-lean-ladder.json')).toEqual(['leadLadderWorkflow']);
    // Since call-node-ladder-v2, asked before call-node-lean-ladder: a new run records that one marker alone.
    expect(childOf('journey-call-branch-webhook-wait-ladder-v2.json')).toEqual(['leadLadderWorkflowV2']);
    const patchMarkers = loadHistory('journey-call-branch-webhook-wait-ladder-v2.json')
      .events.map((event) => event.markerRecordedEventAttributes)
      .filter((marker) => marker?.markerName === 'core_patch')
      .map((marker) => JSON.parse(Buffer.from(marker.details['patch-data'].payloads[0].data, 'base64').toString()).id);
    expect(patchMarkers).toContain('call-node-ladder-v2');
    expect(patchMarkers).not.toContain('call-node-lean-ladder');
  });

  it('fails with a determinism violation when a lean ladder no longer waits in the queue as recorded', async () => {
    const history = loadHistory('lead-ladder-queued-then-granted.json');
    // As if the ladder had dialed without the line handed to it: the queued wait's timer never started.
    const timer = history.events.findIndex((event) => event.timerStartedEventAttributes);
    expect(timer).toBeGreaterThan(0);
    history.events.splice(timer, 1);
    const [result] = await replay([{ workflowId: 'altered-lean-ladder', history: renumbered(history) }]);
    expect(result?.error).toBeInstanceOf(DeterminismViolationError);
  });

  it('replays every committed history on the traced bundle too, so turning tracing on or off keeps runs in flight', async () => {
    // The histories were recorded with the tracing interceptors in the bundle, the untraced one replays them
    // above; the traced bundle (a worker with OTEL_EXPORTER_OTLP_ENDPOINT) must replay them as well.
    const results = await replay(
      historyFiles.map((file) => ({ workflowId: file, history: loadHistory(file) })),
      tracedBundlePath(inject('stack').workflowBundlePath),
      // The traced sandbox hands its spans to the exporter sink: here one that drops them.
      tracingWorkerOptions({ spanProcessor: new NoopSpanProcessor(), resource: Resource.empty() }).sinks,
    );
    expect(results).toHaveLength(historyFiles.length);
    for (const result of results) expect(result.error, result.workflowId).toBeUndefined();
  });

  it('fails with a determinism violation when a history no longer matches the code', async () => {
    const history = loadHistory('lead-dial-answered.json');
    const scheduled = history.events.find(
      (event) => event.activityTaskScheduledEventAttributes?.activityType.name === 'placeCall',
    );
    expect(scheduled).toBeDefined();
    // As if an older version of the workflow had called a different activity first.
    scheduled!.activityTaskScheduledEventAttributes.activityType.name = 'sendWhatsAppTemplate';
    const [result] = await replay([{ workflowId: 'altered', history }]);
    expect(result?.error).toBeInstanceOf(DeterminismViolationError);
  });
});
