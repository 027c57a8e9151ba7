import { context, isSpanContextValid, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import type { Principal } from '../door/principal';
import { log, withLogContext } from '../../lib/log';
import { httpRequestDuration, httpRequests, rateLimitRefusals } from './request-metrics';

const tracer = trace.getTracer('workspace-api');

/** Unmatched paths share one label: a scan of random paths must not grow the metrics without bound. */
const UNMATCHED_ROUTE = 'unmatched';

/**
 * What a request's handling learnt that its log line and metrics carry: set by the route that answers
 * (register-routes.ts) and the door (the principal).
 */
export interface RequestContext {
  route?: string;
  campaignId?: string;
}

/**
 * One span, one log line and the metrics of each request. Runs right after assignRequestId: the span is
 * the active context of everything the request does (a workflow start carries it to the workflow and its
 * activities through the Temporal interceptors). Logs method, route template, status, duration and the
 * ids (request, workspace, campaign): never a header, a query or a body, so never a key or a secret.
 */
export const observeRequests: RequestHandler = (req, res, next) => {
  const started = process.hrtime.bigint();
  const requestId = res.locals.requestId as string;
  const span = tracer.startSpan(`${req.method} request`, {
    kind: SpanKind.SERVER,
    attributes: { 'http.request.method': req.method, 'workspace.request_id': requestId },
  });
  res.once('finish', finished);
  withLogContext({ requestId }, () => context.with(trace.setSpan(context.active(), span), next));
  function finished() {
    const seen = res.locals as RequestContext & { principal?: Principal };
    const route = seen.route ?? UNMATCHED_ROUTE;
    const status = res.statusCode;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const labels = { route, method: req.method, status: String(status) };
    httpRequests.inc(labels);
    httpRequestDuration.observe(labels, seconds);
    if (status === 429) rateLimitRefusals.inc({ route });
    const workspaceId = seen.principal?.workspaceId;
    span.updateName(`${req.method} ${route}`);
    span.setAttributes({
      'http.route': route,
      'http.response.status_code': status,
      ...(workspaceId && { 'workspace.id': workspaceId }),
      ...(seen.campaignId && { 'workspace.campaign_id': seen.campaignId }),
    });
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    const line = {
      method: req.method,
      route,
      status,
      durationMs: Math.round(seconds * 1e4) / 10,
      ...(workspaceId && { workspaceId }),
      ...(seen.campaignId && { campaignId: seen.campaignId }),
      ...(isSpanContextValid(span.spanContext()) && { traceId: span.spanContext().traceId }),
    };
    log[status >= 500 ? 'error' : 'info']({ requestId, ...line }, 'request answered');
  }
};
