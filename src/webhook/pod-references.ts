// What an environment list can carry into a pod besides plain values: `valueFrom` reads a Secret or
// a ConfigMap with the rights of whoever creates the pod, which is the operator (or a provider's
// operator), never the user who wrote the model. Secret and ConfigMap references are handed to the
// Secret guard, which reviews them as the requesting user; the pod's own fields and resources are
// harmless; every other kind (today `fileKeyRef`, or one a later Kubernetes adds) cannot be
// reviewed, so it is refused rather than trusted.
import { isRecord } from './review';
import type { SecretReference } from './secret-access';

/** `valueFrom` kinds that read nothing outside the pod itself. */
const podOwnSources = ['fieldRef', 'resourceFieldRef'] as const;

/** `valueFrom` kinds that name another object, reviewed as the requesting user. */
const reviewedSources = { secretKeyRef: 'secrets', configMapKeyRef: 'configmaps' } as const;

export interface EnvReview {
  /** Every Secret and ConfigMap the list names, for the Secret guard. */
  readonly references: SecretReference[];
  /** Every entry that cannot be allowed, naming the field and the fix. */
  readonly problems: string[];
}

const fix = 'use secretKeyRef or configMapKeyRef (both reviewed as you), fieldRef or resourceFieldRef, or a plain value';

/** Reviews an env list (`[{name, value?, valueFrom?}]`) found at `field`. */
export function envReview(env: unknown, field: string): EnvReview {
  const references: SecretReference[] = [];
  const problems: string[] = [];
  if (env === undefined || env === null) return { references, problems };
  if (!Array.isArray(env)) return { references, problems: [`${field}: must be a list of environment variables`] };
  env.forEach((variable, index) => {
    const entry = `${field}[${index}]`;
    if (!isRecord(variable)) {
      problems.push(`${entry}: must be an object with name and value or valueFrom`);
      return;
    }
    const valueFrom = variable.valueFrom;
    if (valueFrom === undefined || valueFrom === null) return;
    if (!isRecord(valueFrom)) {
      problems.push(`${entry}.valueFrom: must be an object; ${fix}`);
      return;
    }
    // In key order, as the API server stores them, so messages do not depend on how the client wrote them.
    for (const [source, reference] of Object.entries(valueFrom).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const sourceField = `${entry}.valueFrom.${source}`;
      if ((podOwnSources as readonly string[]).includes(source)) continue;
      const resource = reviewedSources[source as keyof typeof reviewedSources];
      if (!resource) {
        problems.push(`${sourceField}: cannot be checked against the requesting user's rights, so it is not allowed; ${fix}`);
        continue;
      }
      const name = isRecord(reference) ? reference.name : undefined;
      if (typeof name !== 'string' || name === '') {
        problems.push(`${sourceField}.name: is required; name the ${resource === 'secrets' ? 'Secret' : 'ConfigMap'} in the object's namespace`);
        continue;
      }
      references.push({ name, field: `${sourceField}.name`, resource });
    }
  });
  return { references, problems };
}
