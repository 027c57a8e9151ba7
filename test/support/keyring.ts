import { keyringSchema, newKeyringEntry, type Keyring } from '../../lib/secrets/keyring';

/** TEST_KEYRING as SECRETS_KEYS spells it: what the operator CLI of a test is given (sealingAdminCli). */
export const TEST_SECRETS_KEYS = newKeyringEntry('test-ring');

/**
 * The key ring a test API and worker hold unless the test gives its own (SECRETS_KEYS): what seals the result webhook
 * endpoints' and store connections' secrets the tests make, so that the worker can sign and the API verify with them.
 */
export const TEST_KEYRING: Keyring = keyringSchema.parse(TEST_SECRETS_KEYS);
