import { createRequire } from 'node:module';
import type { Response } from 'express';
import { z } from 'zod';
import { defineRoute } from '../http/route';

// Redoc's standalone bundle carries everything it needs (no fonts, scripts or telemetry from another
// host), so the reference renders on networks that reach no CDN. Served from node_modules as installed.
const RENDERER_PATH = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
const RENDERER_URL = '/docs/redoc.standalone.js';
const OPENAPI_URL = '/v1/openapi.json';
// The page loads nothing from another host: the side menu's "API docs by Redocly" logo would come from
// Redocly's CDN. Redoc styles with inline <style> elements and runs its search in a blob: worker.
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Outbound Workspace API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="${OPENAPI_URL}" path-in-middle-panel="true"></redoc>
<script src="${RENDERER_URL}"></script>
</body>
</html>
`;

/** Streams the file with Content-Type, Content-Length and Last-Modified; a conditional GET gets 304. */
function sendRenderer(res: Response): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    res.sendFile(RENDERER_PATH, { headers: { 'X-Content-Type-Options': 'nosniff' } }, (error) =>
      error ? reject(error) : resolve({ status: res.statusCode }),
    );
  });
}

export const docsRoutes = [
  defineRoute({
    method: 'get',
    path: '/docs',
    access: { public: true },
    summary: `A browsable reference of this API: ${OPENAPI_URL} rendered by Redoc, every asset served by this service.`,
    tags: ['Operations'],
    responses: { 200: { description: 'The reference, an HTML page.', contentType: 'text/html', schema: z.string() } },
    handler: async ({ res }) => {
      // Written here, like the export files: the route table answers JSON otherwise.
      res.status(200).type('html').set('Content-Security-Policy', CONTENT_SECURITY_POLICY).send(page);
      return { status: 200 };
    },
  }),
  defineRoute({
    method: 'get',
    path: RENDERER_URL,
    access: { public: true },
    summary: "The renderer GET /docs loads (Redoc's standalone bundle, as installed in node_modules).",
    tags: ['Operations'],
    responses: {
      200: { description: 'JavaScript.', contentType: 'text/javascript', schema: z.string() },
      304: { description: 'Not modified since the If-Modified-Since of a conditional GET.' },
    },
    handler: async ({ res }) => sendRenderer(res),
  }),
];
