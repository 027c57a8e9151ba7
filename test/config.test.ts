import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { egressSettings, parseConfig } from '../lib/config';
import { MODEL_BOUNDS_DEFAULTS } from '../lib/openai-client';
import { secretsOfConfig } from '../lib/log';
import { callIntelligenceModelFromConfig } from '../lib/providers';
import { runTestProcess } from './support/processes';

const base = { DATABASE_URL: 'postgresql://user@127.0.0.1:5432/app' };

describe('configuration', () => {
  it('applies defaults and freezes the result', () => {
    const config = parseConfig(base);
    expect(config).toMatchObject({
      PORT: 3000,
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      FALLBACK_CARRIER: 'simulated',
      TRUST_PROXY: false,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads the grace period of a stop: 8 s by default, whole milliseconds from 100 ms to an hour', () => {
    expect(parseConfig(base).SHUTDOWN_GRACE_MS).toBe(8_000);
    expect(parseConfig({ ...base, SHUTDOWN_GRACE_MS: '25000' }).SHUTDOWN_GRACE_MS).toBe(25_000);
    for (const value of ['soon', '50', '1.5', '3600001'])
      expect(() => parseConfig({ ...base, SHUTDOWN_GRACE_MS: value }), value).toThrow(
        /^config: SHUTDOWN_GRACE_MS is invalid/,
      );
  });

  it('reads booleans by name: "false" is false', () => {
    expect(parseConfig({ ...base, TRUST_PROXY: 'false' }).TRUST_PROXY).toBe(false);
    expect(parseConfig({ ...base, TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(() => parseConfig({ ...base, TRUST_PROXY: 'maybe' })).toThrow(/^config: TRUST_PROXY is invalid/);
  });

  it('reads the status callback events a dial subscribes to: in-progress by default, a refusal naming a wrong one', () => {
    expect(parseConfig(base).TELEPHONY_STATUS_CALLBACK_EVENTS).toEqual(['in-progress']);
    expect(
      parseConfig({ ...base, TELEPHONY_STATUS_CALLBACK_EVENTS: 'ringing, in-progress,ringing' })
        .TELEPHONY_STATUS_CALLBACK_EVENTS,
    ).toEqual(['ringing', 'in-progress']);
    expect(parseConfig({ ...base, TELEPHONY_STATUS_CALLBACK_EVENTS: '' }).TELEPHONY_STATUS_CALLBACK_EVENTS).toEqual([]);
    expect(() => parseConfig({ ...base, TELEPHONY_STATUS_CALLBACK_EVENTS: 'queued' })).toThrow(
      /^config: TELEPHONY_STATUS_CALLBACK_EVENTS/,
    );
  });

  it('reads the egress allowances: none by default (https only, no special address), a bad range naming the variable', () => {
    expect(egressSettings(parseConfig(base))).toEqual({ allowHttp: false, allowAddresses: [] });
    expect(
      egressSettings(
        parseConfig({ ...base, EGRESS_ALLOW_HTTP: 'true', EGRESS_ALLOW_ADDRESSES: ' 127.0.0.0/8, ::1/128 ,10.1.2.3' }),
      ),
    ).toEqual({ allowHttp: true, allowAddresses: ['127.0.0.0/8', '::1/128', '10.1.2.3'] });
    expect(() => parseConfig({ ...base, EGRESS_ALLOW_ADDRESSES: '127.0.0.0/33' })).toThrow(
      'config: EGRESS_ALLOW_ADDRESSES is invalid: an IP address or a CIDR range such as 127.0.0.0/8',
    );
    expect(() => parseConfig({ ...base, EGRESS_ALLOW_ADDRESSES: 'localhost' })).toThrow(/EGRESS_ALLOW_ADDRESSES/);
  });

  it('derives the export task queue from the task queue unless EXPORT_TASK_QUEUE is set', () => {
    expect(parseConfig(base).EXPORT_TASK_QUEUE).toBe('workspace-exports');
    expect(parseConfig({ ...base, TEMPORAL_TASK_QUEUE: 'calls' }).EXPORT_TASK_QUEUE).toBe('calls-exports');
    expect(parseConfig({ ...base, TEMPORAL_TASK_QUEUE: 'calls', EXPORT_TASK_QUEUE: 'bulk' }).EXPORT_TASK_QUEUE).toBe(
      'bulk',
    );
    expect(() => parseConfig({ ...base, EXPORT_TASK_QUEUE: '' })).toThrow(/^config: EXPORT_TASK_QUEUE is invalid/);
  });

  it('reads the key ring of secrets at rest (SECRETS_KEYS), the first key current; a malformed ring names the variable, never a key', () => {
    const k2 = Buffer.alloc(32, 2).toString('base64');
    const k1 = Buffer.alloc(32, 1).toString('base64');
    expect(parseConfig(base).SECRETS_KEYS).toBeUndefined();
    const ring = parseConfig({ ...base, SECRETS_KEYS: `k2:${k2}, k1:${k1}` }).SECRETS_KEYS!;
    expect(ring.currentKeyId).toBe('k2');
    expect([...ring.keys.keys()]).toEqual(['k2', 'k1']);
    expect(ring.keys.get('k1')).toEqual(Buffer.alloc(32, 1));
    const short = Buffer.alloc(16, 3).toString('base64');
    for (const [value, reason] of [
      ['', /entry 1 must be <id>:<base64 key>/],
      [k2, /entry 1 must be <id>:<base64 key>/],
      [`k2:${k2},:${k1}`, /entry 2 must be/],
      [`k2:${k2},k2:${k1}`, /key id "k2" is given twice/],
      [`k2:${short}`, /key "k2" must be 32 bytes in base64/],
      [`k2:${k2.slice(0, -4)}!!!!`, /key "k2" must be 32 bytes in base64/],
      [`k2 x:${k2}`, /entry 1 must be/],
    ] as const) {
      let message = '';
      try {
        parseConfig({ ...base, SECRETS_KEYS: value });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message, value).toMatch(/^config: SECRETS_KEYS is invalid: /);
      expect(message, value).toMatch(reason);
      for (const key of [k1, k2, short]) expect(message).not.toContain(key);
    }
  });

  it('reads the model bounds: their defaults, values in range, and refuses one out of range by name', () => {
    expect(parseConfig(base)).toMatchObject({
      MODEL_MAX_TOKENS_DIALOGUE: MODEL_BOUNDS_DEFAULTS.dialogueMaxTokens,
      MODEL_MAX_TOKENS_CHAT: MODEL_BOUNDS_DEFAULTS.chatMaxTokens,
      MODEL_MAX_TOKENS_INTELLIGENCE: MODEL_BOUNDS_DEFAULTS.intelligenceMaxTokens,
      MODEL_HISTORY_MESSAGES: MODEL_BOUNDS_DEFAULTS.history.messages,
      MODEL_HISTORY_CHARS: MODEL_BOUNDS_DEFAULTS.history.chars,
      MODEL_MAX_TOOL_ROUNDS: MODEL_BOUNDS_DEFAULTS.maxToolRounds,
    });
    expect(parseConfig({ ...base, MODEL_MAX_TOKENS_DIALOGUE: '120', MODEL_MAX_TOOL_ROUNDS: '0' })).toMatchObject({
      MODEL_MAX_TOKENS_DIALOGUE: 120,
      MODEL_MAX_TOOL_ROUNDS: 0,
    });
    for (const [name, value] of [
      ['MODEL_MAX_TOKENS_DIALOGUE', '5000'],
      ['MODEL_HISTORY_MESSAGES', '1'],
      ['MODEL_HISTORY_CHARS', 'lots'],
      ['MODEL_MAX_TOOL_ROUNDS', '11'],
    ] as const)
      expect(() => parseConfig({ ...base, [name]: value })).toThrow(new RegExp(`^config: ${name} is invalid`));
  });

  it('reads the dialogue engine: script by default; openai-compatible needs DIALOGUE_BASE_URL and DIALOGUE_MODEL', () => {
    expect(parseConfig(base)).toMatchObject({ DIALOGUE_PROVIDER: 'script', DIALOGUE_TIMEOUT_MS: 10_000 });
    const model = { ...base, DIALOGUE_PROVIDER: 'openai-compatible' };
    expect(() => parseConfig(model)).toThrow(/^config: DIALOGUE_BASE_URL is required but not set$/);
    expect(() => parseConfig({ ...model, DIALOGUE_BASE_URL: 'http://127.0.0.1:3500/v1' })).toThrow(
      /^config: DIALOGUE_MODEL is required but not set$/,
    );
    const config = parseConfig({
      ...model,
      DIALOGUE_BASE_URL: 'http://127.0.0.1:3500/v1',
      DIALOGUE_MODEL: 'gpt-twin',
      DIALOGUE_API_KEY: 'sk-dialogue-key-0123456789',
      DIALOGUE_TIMEOUT_MS: '2500',
    });
    expect(config).toMatchObject({ DIALOGUE_MODEL: 'gpt-twin', DIALOGUE_TIMEOUT_MS: 2_500 });
    // Its key is one of the secrets no log line may hold.
    expect(secretsOfConfig(config)).toContain('sk-dialogue-key-0123456789');
    expect(() => parseConfig({ ...base, DIALOGUE_PROVIDER: 'gpt' })).toThrow(/^config: DIALOGUE_PROVIDER is invalid/);
    // The same through the OpenAI twin (npm start's default), under its own name.
    const twin = { ...base, DIALOGUE_PROVIDER: 'openai-twin' };
    expect(() => parseConfig(twin)).toThrow(/^config: DIALOGUE_BASE_URL is required but not set$/);
    expect(
      parseConfig({ ...twin, DIALOGUE_BASE_URL: 'http://127.0.0.1:3500/v1', DIALOGUE_MODEL: 'openai-twin-rules' }),
    ).toMatchObject({ DIALOGUE_PROVIDER: 'openai-twin' });
    expect(() => parseConfig({ ...base, DIALOGUE_TIMEOUT_MS: '50' })).toThrow(
      /^config: DIALOGUE_TIMEOUT_MS is invalid/,
    );
    // The chat's rule still holds beside it.
    expect(() => parseConfig({ ...base, CHAT_PROVIDER: 'openai-compatible' })).toThrow(/^config: CHAT_BASE_URL/);
  });

  it('reads call intelligence: rule-based by default; a model needs INTELLIGENCE_BASE_URL and INTELLIGENCE_MODEL', () => {
    expect(parseConfig(base)).toMatchObject({ INTELLIGENCE_PROVIDER: 'rule-based', INTELLIGENCE_TIMEOUT_MS: 30_000 });
    expect(callIntelligenceModelFromConfig(parseConfig(base))).toBeUndefined();
    for (const provider of ['openai-compatible', 'openai-twin']) {
      const model = { ...base, INTELLIGENCE_PROVIDER: provider };
      expect(() => parseConfig(model)).toThrow(/^config: INTELLIGENCE_BASE_URL is required but not set$/);
      expect(() => parseConfig({ ...model, INTELLIGENCE_BASE_URL: 'http://127.0.0.1:3500/v1' })).toThrow(
        /^config: INTELLIGENCE_MODEL is required but not set$/,
      );
      const config = parseConfig({
        ...model,
        INTELLIGENCE_BASE_URL: 'http://127.0.0.1:3500/v1',
        INTELLIGENCE_MODEL: 'gpt-twin',
        INTELLIGENCE_API_KEY: 'sk-intelligence-key-0123456789',
        INTELLIGENCE_TIMEOUT_MS: '2500',
      });
      expect(config).toMatchObject({ INTELLIGENCE_MODEL: 'gpt-twin', INTELLIGENCE_TIMEOUT_MS: 2_500 });
      // The provider is recorded under its name: a twin's results never pass for a model's.
      expect(callIntelligenceModelFromConfig(config)?.name).toBe(provider);
      // Its key is one of the secrets no log line may hold.
      expect(secretsOfConfig(config)).toContain('sk-intelligence-key-0123456789');
    }
    expect(() => parseConfig({ ...base, INTELLIGENCE_PROVIDER: 'gpt' })).toThrow(
      /^config: INTELLIGENCE_PROVIDER is invalid/,
    );
    expect(() => parseConfig({ ...base, INTELLIGENCE_BASE_URL: 'not a url' })).toThrow(
      /^config: INTELLIGENCE_BASE_URL is invalid/,
    );
    // Below the activity's 2 minutes, so that the fallback always has time to run.
    for (const value of ['50', '100001', 'soon'])
      expect(() => parseConfig({ ...base, INTELLIGENCE_TIMEOUT_MS: value }), value).toThrow(
        /^config: INTELLIGENCE_TIMEOUT_MS is invalid/,
      );
    // The other providers' rules still hold beside it.
    expect(() => parseConfig({ ...base, DIALOGUE_PROVIDER: 'openai-compatible' })).toThrow(
      /^config: DIALOGUE_BASE_URL/,
    );
  });

  it('names the variable that is missing or wrong', () => {
    expect(() => parseConfig({})).toThrow('config: DATABASE_URL is required but not set');
    expect(() => parseConfig({ ...base, PORT: 'eighty' })).toThrow(/^config: PORT is invalid/);
    expect(() => parseConfig({ ...base, FALLBACK_CARRIER: 'twilio' })).toThrow(/^config: FALLBACK_CARRIER is invalid/);
  });

  it('stops a process with one line naming the variable', async () => {
    const result = await runTestProcess(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
      cwd: path.resolve(import.meta.dirname, '..'),
      env: { PATH: process.env.PATH, DATABASE_URL: base.DATABASE_URL, PORT: '-1' },
    });
    expect(result.code).toBe(78);
    expect(result.stderr.trim()).toMatch(/^config: PORT is invalid: [^\n]+$/);
  });
});
