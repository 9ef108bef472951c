// Which quota tiers a portal user may mint keys in: a tier that names groups (chart value
// `quotas.tiers[].groups`) is only for members of one of them; a tier without groups is for
// everyone (the behaviour before tiers could name groups).
import { QuotaTier } from './config';

/** Whether a user with `userGroups` may mint keys in `tier`. */
export function tierAllowed(tier: QuotaTier, userGroups: readonly string[]): boolean {
  return !tier.groups || tier.groups.length === 0 || tier.groups.some((g) => userGroups.includes(g));
}

/** The tiers offered to a user (the mint form lists only these). */
export function tiersFor(tiers: readonly QuotaTier[], userGroups: readonly string[]): QuotaTier[] {
  return tiers.filter((t) => tierAllowed(t, userGroups));
}

/** Why the user may not mint in `tier` (naming the tier, its groups and the fix); undefined when they may. */
export function tierRefusal(tier: QuotaTier, userGroups: readonly string[]): string | undefined {
  if (tierAllowed(tier, userGroups)) return undefined;
  const groups = tier.groups!;
  return `tier: "${tier.name}" is only for members of ${groups.length === 1 ? 'group' : 'groups'} ${groups.join(', ')}; pick another tier, or ask an administrator to add you to ${groups.length === 1 ? 'that group' : 'one of them'}`;
}
