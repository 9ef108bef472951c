// Which Secrets the key portal may read and change (issue 29, Medium 6). The portal faces the
// internet, so it holds no right on Secrets by kind: the chart's Role names its session Secret,
// and the operator keeps a second Role (src/operator/portal-secrets-role.ts) naming each model's
// key Secret and each portal user's Secret, as they come and go. Pure: the operator computes the
// Role from its watches, the unit tests from plain objects.
import { ANNOTATION_MODEL_NAME, LABEL_API_KEYS, LABEL_MODEL_KIND, apiKeyObjectNames } from './api-keys';
import { LABEL_PORTAL_USER, PORTAL_USER_SECRET_PREFIX } from './portal-users';

/** What is read of a Secret here: its name, labels and annotations (never its data). */
export interface SecretMetadata {
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string>; readonly annotations?: Record<string, string> };
}

const MODEL_KINDS = new Set(['LLMModel', 'PassthroughModel']);
/** The verbs the portal uses on the Secrets it is given: it reads them and patches their data. */
export const PORTAL_SECRET_VERBS = ['get', 'patch'];

/**
 * A model's key Secret as the operator creates it: labelled, annotated with its model, and named
 * as that model's key Secret. A Secret someone else labelled under another name (a provider
 * credential, a token Secret) never qualifies, so labels alone cannot hand the portal a Secret.
 */
function isModelKeySecret(secret: SecretMetadata): boolean {
  const { name, labels, annotations } = secret.metadata;
  const model = annotations?.[ANNOTATION_MODEL_NAME];
  return labels?.[LABEL_API_KEYS] === 'true' && MODEL_KINDS.has(labels?.[LABEL_MODEL_KIND] ?? '') && !!model && apiKeyObjectNames(model).secret === name;
}

/** A portal user's Secret: `nls-portal-user-<hash>`, labelled with the same hash (what the admission policy lets the portal create). */
function isPortalUserSecret(secret: SecretMetadata): boolean {
  const { name, labels } = secret.metadata;
  const hash = labels?.[LABEL_PORTAL_USER];
  return !!hash && name === `${PORTAL_USER_SECRET_PREFIX}${hash}`;
}

/** The names of the Secrets the portal may get and patch, sorted and unique (so an unchanged set renders the same Role). */
export function portalSecretNames(secrets: readonly SecretMetadata[]): string[] {
  const names = new Set(secrets.filter((s) => isModelKeySecret(s) || isPortalUserSecret(s)).map((s) => s.metadata.name));
  return [...names].sort();
}

/** Whether a Secret name is a portal user's (the group refresh walks these). */
export function isPortalUserSecretName(name: string): boolean {
  return name.startsWith(PORTAL_USER_SECRET_PREFIX);
}

/**
 * The Role's rules for `names`. No names, no rule: a rule with an empty `resourceNames` list
 * grants the verbs on every Secret of the namespace.
 */
export function portalSecretsRoleRules(names: readonly string[]) {
  if (names.length === 0) return [];
  return [{ apiGroups: [''], resources: ['secrets'], resourceNames: [...names], verbs: [...PORTAL_SECRET_VERBS] }];
}

/** The Secret names a stored Role grants (what the portal's group refresh and the operator's restart read back). */
export function secretNamesOfRole(role: { rules?: ReadonlyArray<{ resources?: readonly string[]; resourceNames?: readonly string[] }> } | undefined): string[] {
  return [...new Set((role?.rules ?? []).filter((r) => r.resources?.includes('secrets')).flatMap((r) => r.resourceNames ?? []))].sort();
}
