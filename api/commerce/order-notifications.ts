import { ZodError } from 'zod';
import {
  RECENT_ORDER_VOLUME_DAYS,
  TEMPLATE_PURPOSES,
  isOrderNotificationPreset,
  presetValueCount,
} from '../../lib/commerce/order-notification-presets';
import type { Principal } from '../door/principal';
import type { AppServices } from '../app-services';
import { findOwnedConnection } from '../crm/crm-connections';
import {
  replaceRulesOfConnection,
  rulesAndOrderVolume,
  templateStatuses,
  templateVariableCounts,
} from './commerce-store';

export interface OrderNotificationRuleInput {
  templateId: string;
  presetId: string;
  enabled: boolean;
  delayMinutes: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The connection's rules in order, each with its template's status and purpose as they are now (a template
 * deleted since: DELETED, unknown), and the connection's orders placed in the last RECENT_ORDER_VOLUME_DAYS days.
 */
async function rulesAnswer({ db }: AppServices, connectionId: string) {
  const { rules, recentOrderVolume } = await rulesAndOrderVolume(
    db,
    connectionId,
    new Date(Date.now() - RECENT_ORDER_VOLUME_DAYS * DAY_MS),
  );
  const templates = await templateStatuses(
    db,
    rules.map((rule) => rule.templateId),
  );
  const templateOf = new Map(templates.map((template) => [template.id, template]));
  return {
    rules: rules.map((rule) => {
      const template = templateOf.get(rule.templateId);
      return {
        id: rule.id,
        trigger: rule.trigger,
        templateId: rule.templateId,
        presetId: rule.presetId,
        enabled: rule.enabled,
        delayMinutes: rule.delayMinutes,
        templateStatus: template?.status ?? 'DELETED',
        templatePurpose: template ? TEMPLATE_PURPOSES[template.category] : 'unknown',
      };
    }),
    recentOrderVolume,
  };
}

export async function getOrderNotificationRules(services: AppServices, principal: Principal, connectionId: string) {
  const connection = await findOwnedConnection(services, principal, connectionId);
  return rulesAnswer(services, connection.id);
}

/**
 * Replaces the connection's whole set of rules (docs/features/commerce.md#order-notifications): every rule gets a new
 * id. Each names a WhatsApp template of the workspace (any status: it must be APPROVED when a notification sends) that
 * the preset can fill (its variables at most the preset's values), else 400 invalid_body at the rule's field and
 * nothing changes. The connection's row is locked, so concurrent replaces take turns and the last one wins whole.
 * Notifications already waiting keep their old rule id: when their delay ends they find it gone and send nothing.
 */
export async function replaceOrderNotificationRules(
  services: AppServices,
  principal: Principal,
  connectionId: string,
  rules: readonly OrderNotificationRuleInput[],
) {
  const connection = await findOwnedConnection(services, principal, connectionId);
  const templates = await templateVariableCounts(
    services.db,
    principal.workspaceId,
    rules.map((rule) => rule.templateId),
  );
  const templateOf = new Map(templates.map((template) => [template.id, template]));
  const issues = rules.flatMap((rule, index) => {
    const template = templateOf.get(rule.templateId);
    if (!template)
      return [
        {
          code: 'custom' as const,
          path: ['rules', index, 'templateId'],
          message: 'no WhatsApp template of this workspace has this id (GET /whatsapp/templates)',
          input: rule.templateId,
        },
      ];
    if (isOrderNotificationPreset(rule.presetId) && template.variableCount > presetValueCount(rule.presetId))
      return [
        {
          code: 'custom' as const,
          path: ['rules', index, 'presetId'],
          message: `the template has ${template.variableCount} variables; this preset fills ${presetValueCount(rule.presetId)}`,
          input: rule.presetId,
        },
      ];
    return [];
  });
  if (issues.length) throw new ZodError(issues);
  await replaceRulesOfConnection(services.db, connection.id, rules);
  return rulesAnswer(services, connection.id);
}
