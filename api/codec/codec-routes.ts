import express, { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';
import { sameSecret } from '../../lib/timing-safe';
import { PayloadDecodeError } from '../../lib/temporal/payload-codec';

/**
 * The codec server the Temporal Web UI (and `temporal --codec-endpoint`) calls to show sealed payloads in the clear
 * and to seal what an operator sends from the UI (docs/temporal-ui.md#the-codec-server): POST {base}/decode and
 * {base}/encode with `{"payloads":[{"metadata":{k:base64},"data":base64}]}`, answered in the same shape.
 *
 * It runs inside the API process, under /codec, only when TEMPORAL_CODEC_TOKEN is set. The token is presented as
 * `Authorization: Bearer <token>` (scripts, the CLI) or as a path segment, /codec/<token>/decode: the Web UI without
 * its own sign-in has no header to send, so its configured endpoint carries the token, and is exactly as secret as
 * the UI that shows it (bound to 127.0.0.1, docker-compose.yml).
 */
export interface CodecServerOptions {
  codec: PayloadCodec;
  token: string;
  /** The one browser origin answered with CORS headers (the Web UI's). */
  corsOrigin: string;
  /** Access-Control-Allow-Credentials: only when configured (TEMPORAL_CODEC_CORS_CREDENTIALS). */
  corsCredentials: boolean;
}

/**
 * Caps: the UI decodes one event's payloads per request, and this product's payloads are a few KB (a journey's
 * definition the largest): the API's own 1 MB body cap, answered by the app's error handler, holds them.
 */
export const CODEC_MAX_BODY_BYTES = 1024 * 1024;
export const CODEC_MAX_PAYLOADS = 1_000;
const MAX_METADATA_ENTRIES = 32;
const MAX_METADATA_KEY_CHARS = 256;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const base64 = z.string().regex(BASE64, 'must be base64');
const codecBody = z.object({
  payloads: z
    .array(
      z.object({
        metadata: z
          .record(z.string().check(atMostCodePoints(MAX_METADATA_KEY_CHARS)), base64)
          .refine((metadata) => Object.keys(metadata).length <= MAX_METADATA_ENTRIES, {
            message: `at most ${MAX_METADATA_ENTRIES} metadata entries`,
          })
          .optional(),
        data: base64.optional(),
      }),
    )
    .max(CODEC_MAX_PAYLOADS),
});
type JsonPayload = z.infer<typeof codecBody>['payloads'][number];

const fromJson = (payload: JsonPayload): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
  ),
  data: Buffer.from(payload.data ?? '', 'base64'),
});

const toJson = (payload: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value ?? []).toString('base64')]),
  ),
  data: Buffer.from(payload.data ?? []).toString('base64'),
});

export function codecRouter(options: CodecServerOptions): Router {
  const router = Router();
  const cors: RequestHandler = (req, res, next) => {
    if (req.get('origin') === options.corsOrigin) {
      res.set({ 'Access-Control-Allow-Origin': options.corsOrigin, Vary: 'Origin' });
      if (options.corsCredentials) res.set('Access-Control-Allow-Credentials', 'true');
    }
    next();
  };
  router.use(cors);
  router.options(['/:operation', '/:token/:operation'], (req, res) => {
    res
      .set({
        'Access-Control-Allow-Methods': 'POST',
        'Access-Control-Allow-Headers': 'Content-Type, Authorization, X-Namespace',
        'Access-Control-Max-Age': '600',
      })
      .status(204)
      .end();
  });
  const authorize =
    (pathToken: boolean): RequestHandler =>
    (req, _res, next) => {
      const header = req.get('authorization');
      const presented = pathToken
        ? typeof req.params.token === 'string'
          ? req.params.token
          : undefined
        : header?.startsWith('Bearer ')
          ? header.slice('Bearer '.length)
          : undefined;
      next(sameSecret(presented, options.token) ? undefined : new Refusal(ErrorCode.unauthorized));
    };
  const handle =
    (operation: 'encode' | 'decode'): RequestHandler =>
    async (req, res, next) => {
      try {
        const parsed = codecBody.safeParse(req.body);
        if (!parsed.success) throw parsed.error;
        const payloads = parsed.data.payloads.map(fromJson);
        const done = await (operation === 'encode' ? options.codec.encode(payloads) : options.codec.decode(payloads));
        res.json({ payloads: done.map(toJson) });
      } catch (error) {
        next(error instanceof PayloadDecodeError ? undecodable(error) : error);
      }
    };
  const json = express.json({ limit: CODEC_MAX_BODY_BYTES, type: () => true });
  for (const operation of ['encode', 'decode'] as const) {
    router.post(`/${operation}`, authorize(false), json, handle(operation));
    router.post(`/:token/${operation}`, authorize(true), json, handle(operation));
  }
  return router;
}

function undecodable(error: PayloadDecodeError): Refusal {
  return new Refusal(ErrorCode.invalid_body, { issues: [{ path: ['payloads'], message: error.message }] });
}
