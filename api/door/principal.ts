import type { Plan } from '../../lib/door/workspace-admin';

/** Who is calling: the key, the workspace it belongs to, the member it acts for and what it may do. */
export interface Principal {
  keyId: string;
  workspaceId: string;
  memberId: string;
  /** false: a key issued without scopes. */
  scoped: boolean;
  /** The key's scopes with what they include, intersected with the member's current role. */
  permissions: ReadonlySet<string>;
  plan: Plan;
  features: readonly string[];
}
