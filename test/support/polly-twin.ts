// The Polly twin in the test process (docs/features/voices.md#the-polly-twin), and the official SDK's client of it.
import { afterAll } from 'vitest';
import { PollyClient } from '@aws-sdk/client-polly';
import { DEVELOPMENT_POLLY_CREDENTIALS } from '../../simulators/polly-twin/config';
import { createPollyTwin, type PollyTwin } from '../../simulators/polly-twin/server';

export { DEVELOPMENT_POLLY_CREDENTIALS };
export const TWIN_REGION = 'eu-west-1';

/** A twin on a free loopback port for the file's tests, closed after them. */
export async function startPollyTwin(): Promise<{ twin: PollyTwin; endpoint: string }> {
  const twin = createPollyTwin({ credentials: [DEVELOPMENT_POLLY_CREDENTIALS], region: TWIN_REGION });
  const endpoint = await twin.listen(0);
  afterAll(() => twin.close());
  return { twin, endpoint };
}

/** The SDK's client of the twin: only the endpoint (and the twin's credentials) differ from AWS's. */
export const twinClient = (
  endpoint: string,
  credentials: { accessKeyId: string; secretAccessKey: string } = DEVELOPMENT_POLLY_CREDENTIALS,
  region = TWIN_REGION,
) => new PollyClient({ region, endpoint, credentials, maxAttempts: 1 });
