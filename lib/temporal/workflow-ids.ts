import { createHash } from 'node:crypto';

/**
 * Every Temporal workflow id the service makes outside workflow code, in one place. An id names its
 * workflow for good: Temporal refuses a second run under a running (or, with REJECT_DUPLICATE, a
 * finished) id, which is what makes a retried start harmless. Whatever needs an id, SQL included,
 * takes it from here; nothing recomputes one. The formats are those of workflows in flight: never
 * change one. The only id made elsewhere is a child's: a journey's call node runs the dial ladder as
 * `journey-<runId>-call-<nodeId>-<visit>`, made by the run itself (workflows/journeys/journey-run.ts), since
 * workflow code cannot load node:crypto, which this module needs.
 */

/**
 * A lead's workflow (the dial ladder, or a journey run for a pushed lead): a function of campaign and
 * idempotency key, so that a lead pushed twice, or enrolled and pushed under the same key, is one
 * workflow and is never dialed twice.
 */
export function leadWorkflowId(campaignId: string, idempotencyKey: string): string {
  return `lead-${campaignId}-${createHash('sha256').update(idempotencyKey).digest('base64url')}`;
}

/** A journey run started by hand (POST /workflows/{id}/runs); a pushed lead's run has its lead's id. */
export function journeyRunWorkflowId(runId: string): string {
  return `journey-run-${runId}`;
}

/** The one control workflow of a campaign (start, pause, resume, stop). */
export function campaignWorkflowId(campaignId: string): string {
  return `campaign-${campaignId}`;
}

/** The one workflow that turns a campaign's calling list into leads. */
export function contactEnrollmentWorkflowId(campaignId: string): string {
  return `enroll-${campaignId}`;
}

/** One delivery of a result webhook event, with its retries. */
export function webhookDeliveryWorkflowId(deliveryId: string): string {
  return `webhook-delivery-${deliveryId}`;
}

/** The booking of one slot for one call, by its booking key (lib/calendar/booking-key.ts): a retry finds the same run. */
export function appointmentBookingWorkflowId(bookingKey: string): string {
  return `appointment-booking-${bookingKey}`;
}

/** One export job; a second start of the same job is a no-op. */
export function exportJobWorkflowId(exportId: string): string {
  return `export-${exportId}`;
}

/**
 * The transcript, extraction and evaluation of one call, made once when an answered call ends; a re-run
 * asked for through the API (calls.edit) is a workflow of its own, named by the request that asked.
 */
export function callIntelligenceWorkflowId(callId: string, rerunId?: string): string {
  return rerunId === undefined ? `call-intelligence-${callId}` : `call-intelligence-${callId}-rerun-${rerunId}`;
}

/** One test call (POST /calls/test): placed, waited for and ended by its own workflow. */
export function testCallWorkflowId(callId: string): string {
  return `test-call-${callId}`;
}

/**
 * One inbound call, watched until it ends (workflows/calls/inbound-call.ts): by its attempt id, unique among calls, so a
 * carrier asking its voice URL again starts nothing twice.
 */
export function inboundCallWorkflowId(attemptId: string): string {
  return `inbound-call-${attemptId}`;
}

/** The analysis of one uploaded recording (POST /speech/calls): decoded, transcribed, scored and billed. */
export function speechAnalysisWorkflowId(speechCallId: string): string {
  return `speech-analysis-${speechCallId}`;
}

/** One outbound WhatsApp message (POST /whatsapp/messages, a WHATSAPP campaign's lead): handed to the provider, at most once. */
export function whatsAppMessageWorkflowId(messageId: string): string {
  return `whatsapp-message-${messageId}`;
}

/** The durable processing of one store webhook delivery, started after the receiver answered. */
export function crmDeliveryWorkflowId(deliveryId: string): string {
  return `crm-delivery-${deliveryId}`;
}

/** One Admin API import of a store's customers into a campaign (POST /campaigns/{id}/import-from-crm with a token). */
export function crmImportWorkflowId(importId: string): string {
  return `crm-import-${importId}`;
}

/** One order notification: a rule's message for one order, waiting out the rule's delay. */
export function orderNotificationWorkflowId(ruleId: string, orderId: string): string {
  return `order-notification-${ruleId}-${orderId}`;
}

/** A live sheet's workflow, for the sheet's whole life (it continues as new to keep its history short). */
export function liveSheetWorkflowId(sheetId: string): string {
  return `live-sheet-${sheetId}`;
}
