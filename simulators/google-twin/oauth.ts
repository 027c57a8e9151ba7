import { createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { calendarDiscovery } from './discovery';

/**
 * Google's OAuth 2.0 token endpoint for service accounts (RFC 7523, the JWT bearer grant), as the twin serves it: a
 * `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` form with an RS256 `assertion` signed by the account's
 * private key, whose `iss` is the account's e-mail, `aud` the token endpoint and `exp` at most an hour after `iat`.
 * Answers `{ access_token, expires_in, token_type: 'Bearer' }`, or Google's `{ error, error_description }` (400).
 */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const SHEETS_SCOPES = ['https://www.googleapis.com/auth/spreadsheets', 'https://www.googleapis.com/auth/drive'];
/** The scopes of the Calendar API v3, as its discovery document lists them. */
export const CALENDAR_SCOPES = Object.keys(calendarDiscovery().auth.oauth2.scopes);

export interface TwinServiceAccount {
  clientEmail: string;
  /** The project number quota errors name. */
  projectNumber: string;
  publicKey: KeyObject;
}

export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

const base64url = (text: string) => Buffer.from(text, 'base64url');

/** Checks an assertion and answers the account it names; `tokenUrls`: the audiences taken (Google's and the twin's). */
export function verifyAssertion(
  assertion: string,
  accounts: ReadonlyMap<string, TwinServiceAccount>,
  tokenUrls: readonly string[],
  nowSeconds = Math.floor(Date.now() / 1000),
): { account: TwinServiceAccount; scopes: string[]; subject?: string } {
  const parts = assertion.split('.');
  if (parts.length !== 3)
    throw new OAuthError(
      'invalid_grant',
      'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.',
    );
  const [header, payload, signature] = parts as [string, string, string];
  let claims: { iss?: string; aud?: string; scope?: string; exp?: number; iat?: number; sub?: string };
  let alg: string | undefined;
  try {
    alg = (JSON.parse(base64url(header).toString()) as { alg?: string }).alg;
    claims = JSON.parse(base64url(payload).toString()) as typeof claims;
  } catch {
    throw new OAuthError('invalid_grant', 'Invalid JWT Signature.');
  }
  const account = claims.iss ? accounts.get(claims.iss) : undefined;
  if (!account) throw new OAuthError('invalid_grant', 'Invalid grant: account not found');
  if (
    alg !== 'RS256' ||
    !verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), account.publicKey, base64url(signature))
  )
    throw new OAuthError('invalid_grant', 'Invalid JWT Signature.');
  if (!claims.aud || !tokenUrls.includes(claims.aud))
    throw new OAuthError('invalid_grant', 'Invalid JWT: Failed audience check.');
  const { iat = 0, exp = 0 } = claims;
  if (exp - iat > 3600 || exp < nowSeconds - 60 || iat > nowSeconds + 60)
    throw new OAuthError(
      'invalid_grant',
      'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
    );
  const scopes = (claims.scope ?? '').split(' ').filter(Boolean);
  if (!scopes.some((scope) => SHEETS_SCOPES.includes(scope) || CALENDAR_SCOPES.includes(scope)))
    throw new OAuthError('invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
  // `sub`: domain-wide delegation, the account acting as a Workspace user (the twin does not check the admin's grant).
  return { account, scopes, ...(claims.sub && claims.sub !== claims.iss ? { subject: claims.sub } : {}) };
}

/** An access token as Google issues them: opaque, `ya29.` and random characters. */
export const newAccessToken = () => `ya29.twin-${randomBytes(24).toString('base64url')}`;

/**
 * A service account key as the Google Cloud console downloads it (`type: service_account`), for an account the twin
 * creates: its token_uri is the twin's token endpoint, so the official client gets its tokens there.
 */
export function createServiceAccountKey(options: { clientEmail: string; projectId: string; tokenUri: string }) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = {
    type: 'service_account',
    project_id: options.projectId,
    private_key_id: randomBytes(20).toString('hex'),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: options.clientEmail,
    client_id: String(100_000_000_000_000_000_000n + BigInt(`0x${randomBytes(8).toString('hex')}`)),
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: options.tokenUri,
    auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
    client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(options.clientEmail)}`,
    universe_domain: 'googleapis.com',
  };
  return { key, publicKey: createPublicKey(publicKey.export({ type: 'spki', format: 'pem' })) };
}
