import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../lib/config';
import { newKeyringEntry } from '../../lib/secrets/keyring';
import {
  temporalConnectionOptions,
  temporalSetupOfConfig,
  TemporalConnectionSettingsError,
} from '../../lib/temporal/connection';
import { EncryptionCodec } from '../../lib/temporal/payload-codec';

const base = { DATABASE_URL: 'postgresql://app:secret@127.0.0.1:5432/app', TEMPORAL_ADDRESS: 'temporal.example:7233' };
const options = (env: Record<string, string>) => temporalConnectionOptions(parseConfig({ ...base, ...env }));
const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-tls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const where = path.join(dir, name);
  writeFileSync(where, content);
  return where;
};
const CA = '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n';
const settingsError = (env: Record<string, string>) => {
  try {
    options(env);
  } catch (error) {
    expect(error).toBeInstanceOf(TemporalConnectionSettingsError);
    return (error as Error).message;
  }
  throw new Error('the settings were accepted');
};

describe('reaching a secured Temporal (lib/temporal/connection.ts)', () => {
  it('connects in the clear to the address when nothing else is set', () => {
    expect(options({})).toEqual({ address: 'temporal.example:7233' });
  });

  it('turns TLS on with the system CAs, or with the server CA and name given', () => {
    expect(options({ TEMPORAL_TLS: 'true' })).toEqual({ address: 'temporal.example:7233', tls: {} });
    const withCa = options({ TEMPORAL_TLS_SERVER_CA_FILE: file('ca.pem', CA), TEMPORAL_TLS_SERVER_NAME: 'frontend' });
    expect(withCa.tls).toEqual({ serverRootCACertificate: Buffer.from(CA), serverNameOverride: 'frontend' });
    expect(options({ TEMPORAL_TLS_SERVER_CA: CA }).tls).toEqual({ serverRootCACertificate: Buffer.from(CA) });
  });

  it('presents a client certificate for mTLS, from files or from the environment', () => {
    const fromFiles = options({
      TEMPORAL_TLS_CLIENT_CERT_FILE: file('client.pem', CERT),
      TEMPORAL_TLS_CLIENT_KEY_FILE: file('client.key', KEY),
    });
    expect(fromFiles.tls).toEqual({ clientCertPair: { crt: Buffer.from(CERT), key: Buffer.from(KEY) } });
    const fromEnv = options({ TEMPORAL_TLS_CLIENT_CERT: CERT, TEMPORAL_TLS_CLIENT_KEY: KEY });
    expect(fromEnv.tls).toEqual(fromFiles.tls);
  });

  it("sends Temporal Cloud's API key, and never in the clear", () => {
    expect(options({ TEMPORAL_API_KEY: 'cloud-key' })).toEqual({
      address: 'temporal.example:7233',
      tls: {},
      apiKey: 'cloud-key',
    });
  });

  it('stops at start, naming the variable, on settings that cannot work', () => {
    expect(settingsError({ TEMPORAL_TLS_CLIENT_CERT: CERT })).toContain('TEMPORAL_TLS_CLIENT_KEY');
    expect(settingsError({ TEMPORAL_TLS_SERVER_CA: CA, TEMPORAL_TLS_SERVER_CA_FILE: file('ca2.pem', CA) })).toContain(
      'not both',
    );
    expect(settingsError({ TEMPORAL_TLS_SERVER_CA_FILE: path.join(dir, 'missing.pem') })).toContain(
      'TEMPORAL_TLS_SERVER_CA_FILE',
    );
    expect(() => parseConfig({ ...base, TEMPORAL_TLS: 'maybe' })).toThrow(/TEMPORAL_TLS/);
    expect(() => parseConfig({ ...base, TEMPORAL_CODEC_TOKEN: 'x'.repeat(32) })).toThrow(/SECRETS_KEYS/);
    expect(() => parseConfig({ ...base, TEMPORAL_CODEC_TOKEN: 'short', SECRETS_KEYS: newKeyringEntry('k') })).toThrow(
      /TEMPORAL_CODEC_TOKEN/,
    );
  });

  it('gives every process its connection options and the codec of SECRETS_KEYS together', async () => {
    const config = parseConfig({ ...base, TEMPORAL_API_KEY: 'cloud-key', SECRETS_KEYS: newKeyringEntry('k1') });
    const setup = temporalSetupOfConfig(config);
    expect(setup.connectionOptions.apiKey).toBe('cloud-key');
    expect(setup.dataConverter.payloadCodecs).toEqual([expect.any(EncryptionCodec)]);
    expect(temporalSetupOfConfig(parseConfig(base)).dataConverter).toEqual({});
    const decodeOnly = temporalSetupOfConfig(
      parseConfig({ ...base, SECRETS_KEYS: newKeyringEntry('k1'), TEMPORAL_PAYLOAD_ENCRYPTION: 'false' }),
    );
    const plain = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"+14155550123"') };
    expect(await decodeOnly.dataConverter.payloadCodecs![0]!.encode([plain])).toEqual([plain]);
    expect(await setup.dataConverter.payloadCodecs![0]!.encode([plain])).not.toEqual([plain]);
  });
});
