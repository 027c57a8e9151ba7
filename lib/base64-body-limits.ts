/**
 * The most a file carried in base64 inside a JSON body can be. Request bodies are JSON of at most 1 MB
 * (spec section 8) and base64 takes 4 characters per 3 bytes: 720,000 bytes of a file are 960,000
 * characters, leaving room for the rest of the body.
 */
export const BASE64_IN_JSON_BODY = { maxBytes: 720_000, maxBase64Chars: 960_000 } as const;
