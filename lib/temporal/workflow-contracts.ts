import type { AppointmentBookingInput, AppointmentBookingResult } from '../calendar/appointment-booking';
import type { CallIntelligenceInput, CallIntelligenceResult } from '../call-intelligence/call-intelligence';
import type { CampaignStatus } from '../campaigns/campaign-transitions';
import type { CampaignWorkflowInput } from '../campaigns/campaign-workflow';
import type { OrderNotificationInput, OrderNotificationResult } from '../commerce/order-notification';
import type { CrmDeliveryInput, CrmDeliveryResult } from '../crm/crm-delivery';
import type { CrmImportWorkflowInput, CrmImportWorkflowResult } from '../crm/crm-import';
import type { ContactEnrollmentInput, ContactEnrollmentResult } from '../dial-ladder/contact-enrollment';
import type { LeadDialInput, LeadDialResult } from '../dial-ladder/lead-state';
import type { ExportJobInput, ExportStatus } from '../exports/export-jobs';
import type { JourneyRunInput, JourneyRunResult } from '../journeys/run-state';
import type { WebhookDeliveryInput, WebhookDeliveryResult } from '../result-webhooks/webhook-delivery';
import type { LiveSheetInput } from '../sheets/progress';
import type { SpeechAnalysisInput, SpeechAnalysisResult } from '../speech/speech-analysis';
import type { TestCallInput, TestCallResult } from '../test-calls/test-call';
import type { InboundCallInput, InboundCallResult } from '../calls/inbound-call-watch';
import type { LeadMessageInput, LeadMessageResult } from '../whatsapp/lead-message-state';
import type { WhatsAppMessageInput, WhatsAppMessageResult } from '../whatsapp/whatsapp-message';

/**
 * Every workflow type the worker registers (workflows/index.ts), by the name it is started with, as its
 * caller sees it: what it takes and what it answers. The types live in lib/, beside their feature, and the
 * workflows take them from there, so the floor (lib/temporal/) starts a workflow typed without loading
 * workflow code. test/temporal-floor.test.ts holds workflows/index.ts to this, both ways: every contract is
 * a workflow it exports, with this signature, and every workflow it exports has a contract. A workflow's name
 * and input are recorded in its histories: never rename one, and change an input only compatibly.
 */
export interface WorkflowContracts {
  leadDialWorkflow: (input: LeadDialInput) => Promise<LeadDialResult>;
  leadLadderWorkflow: (input: LeadDialInput) => Promise<LeadDialResult>;
  leadLadderWorkflowV2: (input: LeadDialInput) => Promise<LeadDialResult>;
  campaignWorkflow: (input: CampaignWorkflowInput) => Promise<CampaignStatus>;
  webhookDeliveryWorkflow: (input: WebhookDeliveryInput) => Promise<WebhookDeliveryResult>;
  journeyRunWorkflow: (input: JourneyRunInput) => Promise<JourneyRunResult>;
  contactEnrollmentWorkflow: (input: ContactEnrollmentInput) => Promise<ContactEnrollmentResult>;
  exportJobWorkflow: (input: ExportJobInput) => Promise<ExportStatus>;
  callIntelligenceWorkflow: (input: CallIntelligenceInput) => Promise<CallIntelligenceResult>;
  testCallWorkflow: (input: TestCallInput) => Promise<TestCallResult>;
  inboundCallWorkflow: (input: InboundCallInput) => Promise<InboundCallResult>;
  speechAnalysisWorkflow: (input: SpeechAnalysisInput) => Promise<SpeechAnalysisResult>;
  whatsAppMessageWorkflow: (input: WhatsAppMessageInput) => Promise<WhatsAppMessageResult>;
  leadMessageWorkflow: (input: LeadMessageInput) => Promise<LeadMessageResult>;
  crmDeliveryWorkflow: (input: CrmDeliveryInput) => Promise<CrmDeliveryResult>;
  crmImportWorkflow: (input: CrmImportWorkflowInput) => Promise<CrmImportWorkflowResult>;
  orderNotificationWorkflow: (input: OrderNotificationInput) => Promise<OrderNotificationResult>;
  liveSheetWorkflow: (input: LiveSheetInput) => Promise<void>;
  appointmentBookingWorkflow: (input: AppointmentBookingInput) => Promise<AppointmentBookingResult>;
}

/** A workflow type's name, as Temporal records it. */
export type WorkflowType = keyof WorkflowContracts;

/** Every name of WorkflowContracts, at run time (the compiler refuses one missing here, or one too many). */
export const WORKFLOW_TYPES = Object.keys({
  leadDialWorkflow: true,
  leadLadderWorkflow: true,
  leadLadderWorkflowV2: true,
  campaignWorkflow: true,
  webhookDeliveryWorkflow: true,
  journeyRunWorkflow: true,
  contactEnrollmentWorkflow: true,
  exportJobWorkflow: true,
  callIntelligenceWorkflow: true,
  testCallWorkflow: true,
  inboundCallWorkflow: true,
  speechAnalysisWorkflow: true,
  whatsAppMessageWorkflow: true,
  leadMessageWorkflow: true,
  crmDeliveryWorkflow: true,
  crmImportWorkflow: true,
  orderNotificationWorkflow: true,
  liveSheetWorkflow: true,
  appointmentBookingWorkflow: true,
} satisfies Record<WorkflowType, true>) as readonly WorkflowType[];

/**
 * The lean ladder a new CLASSIC lead runs (started by the lead outbox, signalled with start by its line): its latest
 * type. Runs of the types before it continue on them (docs/patch-register.md says until when each stays registered).
 */
export const LEAD_LADDER_WORKFLOW = 'leadLadderWorkflowV2' satisfies WorkflowType;

/** Every type of the lean ladder whose runs may be in flight, the latest last (a stop signals them all). */
export const LEAD_LADDER_WORKFLOW_TYPES = [
  'leadLadderWorkflow',
  LEAD_LADDER_WORKFLOW,
] as const satisfies readonly WorkflowType[];
