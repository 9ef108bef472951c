// Who may use a model, by the internal endpoint's rule: everyone authenticated when
// `spec.access.public`, otherwise members of at least one of `spec.access.groups`. The portal
// asks this before minting, and records the groups that granted access so the operator can
// revoke the key when the model stops granting them.
import { GrantedBy } from './api-keys';

/** The part of an LLMModel or PassthroughModel (v1beta1) this rule reads. */
export interface ModelWithAccess {
  readonly spec?: { readonly access?: { readonly public?: boolean; readonly groups?: readonly string[] } };
}

export interface AccessGrant {
  readonly allowed: boolean;
  /** 'public' when the model is public, 'groups' when a group overlap grants it; undefined when refused. */
  readonly grantedBy?: Exclude<GrantedBy, 'admin'>;
  /** The user's groups that are in spec.access.groups (sorted, no duplicates); recorded on the key. */
  readonly groups: string[];
}

/** The model's spec.access.groups (empty when unset). */
export function accessGroups(model: ModelWithAccess): readonly string[] {
  return model.spec?.access?.groups ?? [];
}

/**
 * Whether a user with `userGroups` may use `model`, and which of their groups grant it. A public
 * model also records the overlapping groups, so the key survives the model turning private while
 * one of them still grants it.
 */
export function grantingGroups(model: ModelWithAccess, userGroups: readonly string[]): AccessGrant {
  const modelGroups = new Set(accessGroups(model));
  const groups = [...new Set(userGroups.filter((g) => modelGroups.has(g)))].sort();
  if (model.spec?.access?.public === true) return { allowed: true, grantedBy: 'public', groups };
  if (groups.length > 0) return { allowed: true, grantedBy: 'groups', groups };
  return { allowed: false, groups: [] };
}
