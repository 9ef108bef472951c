// Reads the e2e API server's audit log for one user (the operator's ServiceAccount): every
// request answered 403, and the rules its roles grant that no request used (a least-privilege
// report: rights worth removing).
import * as fs from 'fs';
import type { KubeObject } from '../../../src/kube/rest';
import { admin } from './e2e';

interface AuditEvent {
  verb: string;
  user: { username: string };
  objectRef?: { resource?: string; subresource?: string; apiGroup?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestURI: string;
  stageTimestamp: string;
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
}

type Role = KubeObject & { rules?: Rule[] };
type Binding = KubeObject & { roleRef: { kind: string; name: string }; subjects?: { kind: string; name: string; namespace?: string }[] };

export interface AuditReport {
  /** Requests of the user in the log. */
  readonly requests: number;
  /** Every request answered 403: when, and `verb requestURI`. */
  readonly forbidden: { readonly at: number; readonly request: string }[];
  /** `role: verbs on group/resource` grants no request used. */
  readonly unused: string[];
}

/** One user's requests in the audit log, oldest first. */
export function auditEvents(file: string, username: string): AuditEvent[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter((e) => e.user?.username === username);
}

export async function auditReport(file: string, username: string, release: string): Promise<AuditReport> {
  const events = auditEvents(file, username);
  const forbidden = events.filter((e) => e.responseStatus?.code === 403).map((e) => ({ at: Date.parse(e.stageTimestamp), request: `${e.verb} ${e.requestURI}` }));

  const [, ns, sa] = username.split(':').slice(1);
  const rest = admin();
  const bound = (b: Binding) => (b.subjects ?? []).some((s) => s.kind === 'ServiceAccount' && s.name === sa && s.namespace === ns);
  const roles: { name: string; namespace?: string; rules: Rule[] }[] = [];
  for (const b of (await rest.list<Binding>('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding')).items.filter(bound)) {
    const role = await rest.get<Role>({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: b.roleRef.name } });
    if (role) roles.push({ name: `ClusterRole ${role.metadata.name}`, rules: role.rules ?? [] });
  }
  for (const b of (await rest.list<Binding>('rbac.authorization.k8s.io/v1', 'RoleBinding')).items.filter(bound)) {
    const kind = b.roleRef.kind;
    const role = await rest.get<Role>({ apiVersion: 'rbac.authorization.k8s.io/v1', kind, metadata: { name: b.roleRef.name, namespace: kind === 'Role' ? b.metadata.namespace : undefined } });
    if (role) roles.push({ name: `${kind} ${role.metadata.name} in ${b.metadata.namespace}`, namespace: b.metadata.namespace, rules: role.rules ?? [] });
  }
  if (roles.length === 0) throw new Error(`no role of release ${release} is bound to ${username}`);

  const used = (namespace: string | undefined, group: string, resource: string, verb: string, names?: string[]) =>
    events.some((e) => {
      const r = e.objectRef;
      if (!r || e.verb !== verb || (r.apiGroup ?? '') !== group) return false;
      const full = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
      if (full !== resource) return false;
      if (namespace && r.namespace !== namespace) return false;
      return !names?.length || (!!r.name && names.includes(r.name));
    });
  const unused: string[] = [];
  for (const role of roles) {
    for (const rule of role.rules) {
      for (const group of rule.apiGroups ?? ['']) {
        for (const resource of rule.resources ?? []) {
          const idle = rule.verbs.filter((verb) => !used(role.namespace, group, resource, verb, rule.resourceNames));
          if (idle.length) unused.push(`${role.name}: ${idle.join(',')} on ${group || 'core'}/${resource}${rule.resourceNames ? ` ${rule.resourceNames.join(',')}` : ''}`);
        }
      }
    }
  }
  return { requests: events.length, forbidden, unused };
}
