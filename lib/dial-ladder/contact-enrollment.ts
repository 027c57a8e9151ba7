/*
 * What contactEnrollmentWorkflow (workflows/dial-ladder/contact-enrollment.ts), which turns a campaign's calling
 * list into leads, is started with and answers: types only, so that whoever starts it (lib/temporal/) loads no
 * workflow code.
 */

export interface ContactEnrollmentInput {
  campaignId: string;
}

export interface ContactEnrollmentResult {
  /** Contacts of the list not enrolled when it ended (the campaign stopped, or nothing left: 0). */
  remaining: number;
}
