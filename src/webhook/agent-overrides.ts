// The allow-list for an AgentDeployment's `spec.overrides` (as AI Runway): overrides may
// only harden the agent's security context. Anything else would let whoever may create an
// AgentDeployment change the workload the operator creates with its own, wider permissions.
import { isRecord } from './review';

/** Pod-level security settings an override may set (`workload.podSecurityContext`). */
export const allowedPodSecurityContextKeys = [
  'runAsUser',
  'runAsGroup',
  'runAsNonRoot',
  'fsGroup',
  'supplementalGroups',
  'fsGroupChangePolicy',
  'seccompProfile',
] as const;

/** Container-level security settings an override may set (`container.securityContext`). */
export const allowedContainerSecurityContextKeys = [
  'runAsUser',
  'runAsGroup',
  'runAsNonRoot',
  'seccompProfile',
  'allowPrivilegeEscalation',
  'readOnlyRootFilesystem',
  'capabilities',
] as const;

const sections: Record<string, { key: string; level: 'pod' | 'container' }> = {
  workload: { key: 'podSecurityContext', level: 'pod' },
  container: { key: 'securityContext', level: 'container' },
};

function isNonNegativeInteger(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 0;
}

// Value checks for the keys that could weaken isolation rather than harden it.
function valueProblem(key: string, value: unknown, field: string): string | undefined {
  switch (key) {
    case 'runAsUser':
    case 'runAsGroup':
    case 'fsGroup':
      return isNonNegativeInteger(value) ? undefined : `${field}: must be a non-negative integer ID`;
    case 'supplementalGroups':
      return Array.isArray(value) && value.every(isNonNegativeInteger) ? undefined : `${field}: must be a list of non-negative integer IDs`;
    case 'runAsNonRoot':
    case 'readOnlyRootFilesystem':
    case 'allowPrivilegeEscalation':
      return typeof value === 'boolean' ? undefined : `${field}: must be true or false`;
    case 'fsGroupChangePolicy':
      return value === 'OnRootMismatch' || value === 'Always' ? undefined : `${field}: must be OnRootMismatch or Always`;
    case 'seccompProfile': {
      if (!isRecord(value) || !['RuntimeDefault', 'Localhost'].includes(value.type as string)) {
        return `${field}: only type RuntimeDefault or Localhost may be set (Unconfined would weaken the agent's isolation)`;
      }
      return undefined;
    }
    case 'capabilities': {
      if (!isRecord(value)) return `${field}: must be an object with a drop list`;
      const extra = Object.keys(value).filter((k) => k !== 'drop');
      if (extra.length > 0) return `${field}: only drop is allowed (found ${extra.join(', ')}); capabilities may be removed, never added`;
      const drop = value.drop;
      return Array.isArray(drop) && drop.every((c) => typeof c === 'string') ? undefined : `${field}.drop: must be a list of capability names`;
    }
    default:
      return undefined;
  }
}

/**
 * Every reason a `podSecurityContext` (`pod`) or container `securityContext` (`container`) of an
 * override is not allowed: only the hardening settings above, with values that cannot weaken
 * isolation (never `privileged`, added capabilities, `Unconfined` seccomp, user namespaces off).
 */
export function securityContextProblems(level: 'pod' | 'container', value: unknown, field: string): string[] {
  if (!isRecord(value)) return [`${field}: must be an object`];
  const allowed: readonly string[] = level === 'pod' ? allowedPodSecurityContextKeys : allowedContainerSecurityContextKeys;
  const problems: string[] = [];
  for (const [setting, settingValue] of Object.entries(value)) {
    const settingField = `${field}.${setting}`;
    if (!allowed.includes(setting)) {
      problems.push(`${settingField}: is not allowed; ${level === 'pod' ? 'podSecurityContext' : 'securityContext'} overrides may only set ${allowed.join(', ')}`);
      continue;
    }
    const problem = valueProblem(setting, settingValue, settingField);
    if (problem) problems.push(problem);
  }
  return problems;
}

/** Every reason `overrides` is not allowed, each naming the field and the fix. */
export function agentOverrideProblems(overrides: unknown, field = 'spec.overrides'): string[] {
  if (overrides === undefined || overrides === null) return [];
  if (!isRecord(overrides)) return [`${field}: must be an object with workload and/or container sections`];
  const problems: string[] = [];
  for (const [sectionName, section] of Object.entries(overrides)) {
    const rule = sections[sectionName];
    const sectionField = `${field}.${sectionName}`;
    if (!rule) {
      problems.push(`${sectionField}: is not allowed; overrides may only set workload.podSecurityContext and container.securityContext`);
      continue;
    }
    if (!isRecord(section)) {
      problems.push(`${sectionField}: must be an object holding ${rule.key}`);
      continue;
    }
    for (const [key, value] of Object.entries(section)) {
      const keyField = `${sectionField}.${key}`;
      if (key !== rule.key) {
        problems.push(`${keyField}: is not allowed; ${sectionName} overrides may only set ${rule.key}`);
        continue;
      }
      problems.push(...securityContextProblems(rule.level, value, keyField));
    }
  }
  return problems;
}
