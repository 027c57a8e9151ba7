import { ZodError } from 'zod';
import type { WhatsAppSender, WhatsAppTemplate } from '../../generated/prisma/client';
import { ErrorCode } from '../../lib/error-codes';
import { Refusal } from '../../lib/refusal';

/*
 * What a send (POST /whatsapp/messages) and a campaign's messaging (PUT /whatsapp/campaigns/{id}) both
 * require of the sender and the template they name: the workspace's own (else 400 at the field named),
 * the sender CONNECTED (409 whatsapp_sender_disconnected), the template APPROVED (409
 * whatsapp_template_not_approved with its status).
 */

const invalid = (path: string[], message: string, input: unknown) =>
  new ZodError([{ code: 'custom', path, message, input }]);

export function assertSenderSendable<Sender extends Pick<WhatsAppSender, 'status'>>(
  sender: Sender | null,
  senderId: string,
  path: string[],
): asserts sender is Sender {
  if (!sender) throw invalid(path, 'no sender of this workspace has this id (GET /whatsapp/senders)', senderId);
  if (sender.status !== 'CONNECTED')
    throw new Refusal(ErrorCode.whatsapp_sender_disconnected, { detail: 'the sender is disconnected' });
}

export function assertTemplateSendable<Template extends Pick<WhatsAppTemplate, 'status'>>(
  template: Template | null,
  templateId: string,
  path: string[],
): asserts template is Template {
  if (!template) throw invalid(path, 'no template of this workspace has this id (GET /whatsapp/templates)', templateId);
  if (template.status !== 'APPROVED')
    throw new Refusal(ErrorCode.whatsapp_template_not_approved, {
      detail: `the template is ${template.status}: only APPROVED templates are sent`,
      templateStatus: template.status,
    });
}
