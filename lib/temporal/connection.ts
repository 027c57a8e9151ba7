import { readFileSync } from 'node:fs';
import type { DataConverter } from '@temporalio/common';
import type { TLSConfig } from '@temporalio/client';
import type { Config } from '../config';
import { temporalDataConverter } from './payload-codec';

/**
 * How every process of this product reaches Temporal (docs/cluster.md#a-secured-temporal): the address, TLS with an
 * optional server CA and server name, mTLS with a client certificate, Temporal Cloud's API key. The same options fit
 * the client's Connection and the worker's NativeConnection, so the API, the workers and the CLI cannot disagree.
 */
export type TemporalConnectionSettings = Pick<
  Config,
  | 'TEMPORAL_ADDRESS'
  | 'TEMPORAL_TLS'
  | 'TEMPORAL_TLS_SERVER_CA'
  | 'TEMPORAL_TLS_SERVER_CA_FILE'
  | 'TEMPORAL_TLS_SERVER_NAME'
  | 'TEMPORAL_TLS_CLIENT_CERT'
  | 'TEMPORAL_TLS_CLIENT_CERT_FILE'
  | 'TEMPORAL_TLS_CLIENT_KEY'
  | 'TEMPORAL_TLS_CLIENT_KEY_FILE'
  | 'TEMPORAL_API_KEY'
>;

export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig;
  apiKey?: string;
}

/** A combination of settings that cannot work, named at start rather than found at the first call. */
export class TemporalConnectionSettingsError extends Error {}

/**
 * The connection options of the settings. PEM files are read here, once, at start: a missing file stops the process
 * with its variable named. TLS is on when asked for, when any TLS file or text is given, and with an API key (Temporal
 * Cloud refuses keys in the clear, and a key sent in the clear would be a key given away).
 */
export function temporalConnectionOptions(
  settings: TemporalConnectionSettings,
  readFile: (path: string) => Buffer = (path) => readFileSync(path),
): TemporalConnectionOptions {
  const pem = (text: string | undefined, file: string | undefined, name: string): Buffer | undefined => {
    if (text !== undefined && file !== undefined)
      throw new TemporalConnectionSettingsError(`config: set ${name} or ${name}_FILE, not both`);
    if (text !== undefined) return Buffer.from(text, 'utf8');
    if (file === undefined) return undefined;
    try {
      return readFile(file);
    } catch (error) {
      throw new TemporalConnectionSettingsError(
        `config: ${name}_FILE ${file} cannot be read: ${(error as Error).message}`,
      );
    }
  };
  const serverCa = pem(settings.TEMPORAL_TLS_SERVER_CA, settings.TEMPORAL_TLS_SERVER_CA_FILE, 'TEMPORAL_TLS_SERVER_CA');
  const clientCert = pem(
    settings.TEMPORAL_TLS_CLIENT_CERT,
    settings.TEMPORAL_TLS_CLIENT_CERT_FILE,
    'TEMPORAL_TLS_CLIENT_CERT',
  );
  const clientKey = pem(
    settings.TEMPORAL_TLS_CLIENT_KEY,
    settings.TEMPORAL_TLS_CLIENT_KEY_FILE,
    'TEMPORAL_TLS_CLIENT_KEY',
  );
  if ((clientCert === undefined) !== (clientKey === undefined))
    throw new TemporalConnectionSettingsError(
      'config: mTLS needs both TEMPORAL_TLS_CLIENT_CERT(_FILE) and TEMPORAL_TLS_CLIENT_KEY(_FILE)',
    );
  const tlsOn =
    settings.TEMPORAL_TLS ||
    serverCa !== undefined ||
    clientCert !== undefined ||
    settings.TEMPORAL_TLS_SERVER_NAME !== undefined ||
    settings.TEMPORAL_API_KEY !== undefined;
  const tls: TLSConfig | undefined = tlsOn
    ? {
        ...(serverCa && { serverRootCACertificate: serverCa }),
        ...(settings.TEMPORAL_TLS_SERVER_NAME && { serverNameOverride: settings.TEMPORAL_TLS_SERVER_NAME }),
        ...(clientCert && clientKey && { clientCertPair: { crt: clientCert, key: clientKey } }),
      }
    : undefined;
  return {
    address: settings.TEMPORAL_ADDRESS,
    ...(tls && { tls }),
    ...(settings.TEMPORAL_API_KEY && { apiKey: settings.TEMPORAL_API_KEY }),
  };
}

/** What every Client and Worker of a configured process is built with: its connection and its payload codec. */
export function temporalSetupOfConfig(
  config: TemporalConnectionSettings & Pick<Config, 'SECRETS_KEYS' | 'TEMPORAL_PAYLOAD_ENCRYPTION'>,
): {
  connectionOptions: TemporalConnectionOptions;
  dataConverter: DataConverter;
} {
  return {
    connectionOptions: temporalConnectionOptions(config),
    dataConverter: temporalDataConverter(config.SECRETS_KEYS, { seal: config.TEMPORAL_PAYLOAD_ENCRYPTION }),
  };
}
