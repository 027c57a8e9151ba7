/** Scopes a key may hold: the catalog of spec section 5. */
export const HOLDABLE_SCOPES = [
  'analytics.view',
  'intel.view',
  'speech.view',
  'speech.edit',
  'speech.delete',
  'speech.upload',
  'campaigns.view',
  'campaigns.edit',
  'campaigns.delete',
  'calls.view',
  'calls.edit',
  'calls.test',
  'sales.view',
  'workflows.view',
  'workflows.run',
  'workflows.recover',
  'agents.view',
  'agents.edit',
  'agents.delete',
  'knowledge.view',
  'knowledge.edit',
  'knowledge.delete',
  'dictionaries.view',
  'dictionaries.edit',
  'dictionaries.delete',
  'functions.view',
  'functions.delete',
  'background_audio.view',
  'background_audio.edit',
  'background_audio.delete',
  'campaign_types.view',
  'campaign_types.edit',
  'campaign_types.delete',
  'chatbots.view',
  'chatbots.edit',
  'chatbots.delete',
  'crm.view',
  'crm.edit',
  'crm.delete',
  'integrations.view',
  'integrations.edit',
  'integrations.delete',
  'calendar.view',
  'calendar.edit',
  'whatsapp.view',
  'whatsapp.edit',
  'whatsapp.delete',
  'whatsapp.send',
  'phone_numbers.view',
  'phone_numbers.edit',
  'billing.view',
  'api_keys.view',
  'result_webhooks.view',
  'result_webhooks.delete',
  'workspace.view',
  'team.view',
] as const;

/** Dashboard permissions that a key never holds, even when issued with them. */
export const NEVER_HOLDABLE_SCOPES = [
  'api_keys.edit',
  'api_keys.delete',
  'team.manage',
  'workspace.edit',
  'billing.recharge',
  'result_webhooks.edit',
  'workflows.edit',
  'functions.edit',
] as const;

export const PERMISSION_CATALOG: readonly string[] = [...HOLDABLE_SCOPES, ...NEVER_HOLDABLE_SCOPES];

const INCLUDED: Readonly<Record<string, readonly string[]>> = {
  'calls.test': ['calls.view', 'agents.view'],
  'whatsapp.send': ['whatsapp.view'],
  'speech.upload': ['speech.view'],
  'workflows.run': ['workflows.view'],
  'workflows.recover': ['workflows.view'],
  'team.manage': ['team.view'],
  'billing.recharge': ['billing.view'],
};

/** A set of permissions with everything they include: edit and delete grant view of their area. */
export function withIncludedPermissions(permissions: Iterable<string>): Set<string> {
  const result = new Set<string>();
  for (const permission of permissions) {
    result.add(permission);
    const [area, action] = permission.split('.');
    if (action === 'edit' || action === 'delete') result.add(`${area}.view`);
    for (const included of INCLUDED[permission] ?? []) result.add(included);
  }
  return result;
}

const holdable = new Set<string>(HOLDABLE_SCOPES);

export function isHoldableScope(scope: string): boolean {
  return holdable.has(scope);
}

/** Scopes as stored on a new key: unknown and never-holdable names are dropped. */
export function holdableScopes(requested: readonly string[]): string[] {
  return [...new Set(requested.filter(isHoldableScope))].sort();
}
