import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * AWS Signature Version 4 as AWS documents it ("Create a signed AWS API request", docs.aws.amazon.com/IAM/latest/
 * UserGuide/reference_sigv-create-signed-request.html), checked on the twin's side: the same canonical request, string
 * to sign and signing key the SDK makes, from the request as received. Only the Authorization header form (no presigned
 * query), with the credential scope `<date>/<region>/polly/aws4_request`.
 */
export interface SignedRequest {
  method: string;
  /** The path as received, percent-encoding intact. */
  path: string;
  /** The query string as received, without `?`. */
  query: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Why a request is refused, as AWS names it (403). */
export interface SignatureFault {
  code: 'MissingAuthenticationTokenException' | 'UnrecognizedClientException' | 'InvalidSignatureException';
  message: string;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 unreserved characters stay, everything else is %XX (uppercase), as SigV4 encodes query parts. */
const encode = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);

function canonicalQuery(query: string): string {
  if (query === '') return '';
  return query
    .split('&')
    .map((pair) => {
      const at = pair.indexOf('=');
      const [name, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
      const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
      return [encode(decode(name)), encode(decode(value))] as const;
    })
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

const headerValue = (value: string | string[] | undefined) =>
  (Array.isArray(value) ? value.join(',') : (value ?? '')).trim().replace(/\s+/g, ' ');

/** AWS refuses a request dated more than 15 minutes from its clock. */
const MAX_SKEW_MS = 15 * 60_000;

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;:-]+), ?Signature=([0-9a-f]{64})$/;

/** Null when the request is signed by one of `secrets` (access key id -> secret) for `region`; else the fault. */
export function signatureFault(
  request: SignedRequest,
  secrets: ReadonlyMap<string, string>,
  region: string,
  now = Date.now(),
): SignatureFault | null {
  const authorization = headerValue(request.headers.authorization);
  if (authorization === '')
    return { code: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const match = AUTHORIZATION.exec(authorization);
  if (!match) return { code: 'InvalidSignatureException', message: 'Authorization header is malformed.' };
  const [, accessKeyId, date, scopeRegion, service, signedHeaderList, signature] = match as unknown as string[];
  const secret = secrets.get(accessKeyId!);
  if (secret === undefined)
    return { code: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (scopeRegion !== region || service !== 'polly')
    return {
      code: 'InvalidSignatureException',
      message: `Credential should be scoped to a valid region and to the polly service (${region}).`,
    };
  const amzDate = headerValue(request.headers['x-amz-date']);
  const signedAt = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!signedAt || amzDate.slice(0, 8) !== date)
    return {
      code: 'InvalidSignatureException',
      message: 'X-Amz-Date is missing or does not match the credential scope.',
    };
  const [, y, mo, d, h, mi, s] = signedAt.map(Number) as number[];
  if (Math.abs(Date.UTC(y!, mo! - 1, d!, h!, mi!, s!) - now) > MAX_SKEW_MS)
    return { code: 'InvalidSignatureException', message: 'Signature expired: the request is dated too far from now.' };
  const signedHeaders = signedHeaderList!.split(';');
  // HTTP/2 carries the host as :authority, which the SDK signs under that name.
  if (!signedHeaders.includes('host') && !signedHeaders.includes(':authority'))
    return { code: 'InvalidSignatureException', message: "The request's signed headers must include host." };
  // The body's own hash, whatever x-amz-content-sha256 claims: a body changed on the way fails the signature.
  const payloadHash = sha256(request.body);
  const canonicalRequest = [
    request.method.toUpperCase(),
    request.path || '/',
    canonicalQuery(request.query),
    signedHeaders.map((name) => `${name}:${headerValue(request.headers[name])}\n`).join(''),
    signedHeaderList,
    payloadHash,
  ].join('\n');
  const scope = `${date}/${scopeRegion}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = ['aws4_request'].reduce(
    (signingKey, part) => hmac(signingKey, part),
    hmac(hmac(hmac(`AWS4${secret}`, date!), scopeRegion!), service!),
  );
  const expected = createHmac('sha256', key).update(stringToSign).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature!, 'hex')))
    return {
      code: 'InvalidSignatureException',
      message:
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
    };
  return null;
}
