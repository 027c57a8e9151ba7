import { PERMISSION_CATALOG, withIncludedPermissions } from './permissions';

export const ROLES = ['owner', 'admin', 'manager', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

const views = PERMISSION_CATALOG.filter((permission) => permission.endsWith('.view'));

/** Areas a manager runs day to day; a manager never deletes and never touches money, keys or team. */
const MANAGER_EXTRA = [
  'campaigns.edit',
  'calls.edit',
  'calls.test',
  'workflows.run',
  'workflows.recover',
  'workflows.edit',
  'agents.edit',
  'knowledge.edit',
  'dictionaries.edit',
  'background_audio.edit',
  'campaign_types.edit',
  'chatbots.edit',
  'crm.edit',
  'integrations.edit',
  'calendar.edit',
  'whatsapp.edit',
  'whatsapp.send',
  'phone_numbers.edit',
  'speech.edit',
  'speech.upload',
];

/** Role -> dashboard permissions. Documented in docs/features/door.md#roles. */
export const ROLE_PERMISSIONS: Readonly<Record<Role, ReadonlySet<string>>> = Object.freeze({
  owner: withIncludedPermissions(PERMISSION_CATALOG),
  admin: withIncludedPermissions(
    PERMISSION_CATALOG.filter((permission) => permission !== 'billing.recharge' && permission !== 'workspace.edit'),
  ),
  manager: withIncludedPermissions([...views, ...MANAGER_EXTRA]),
  viewer: withIncludedPermissions(views),
});
