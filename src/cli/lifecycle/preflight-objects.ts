// The stored-object half of `nls preflight`: every LLMModel, PassthroughModel and AgentDeployment
// in the cluster (paginated LIST, all namespaces), admitted offline by this release's admission
// (src/admission, the code `nls validate` runs), each as a CREATE of its stored spec.
//
// Why CREATE and not an UPDATE of itself: an UPDATE that changes nothing is ratcheted — the API
// server lets unchanged invalid values through — so it would pass exactly the values seed 001 warns
// about (hostnames older webhooks admitted). The operator reconciles the whole stored spec, the
// validating webhook judges the whole object on any later edit, and a restore or a GitOps re-sync
// into a new cluster is a CREATE: an object a CREATE would refuse is one the new version may fail
// to reconcile, and the user must fix it. The server-populated metadata is stripped first, as the
// API server ignores it on a write.
import type { AdmissionResult } from '../../admission';
import { API_GROUP_VERSION } from '../../api/common';
import { isNotFound, type KubeObject, type KubeRest } from '../../kube/rest';

export const STORED_KINDS = ['LLMModel', 'PassthroughModel', 'AgentDeployment'] as const;

/** Metadata the API server sets itself; a client's value is ignored (or refused) on a write. */
const SERVER_METADATA = ['managedFields', 'resourceVersion', 'uid', 'creationTimestamp', 'generation', 'selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds'];

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The object as a client would write it: no status, no server-populated metadata. */
export function writableForm(stored: Record<string, unknown>): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(stored)) as Record<string, unknown>;
  delete copy.status;
  if (isRecord(copy.metadata)) for (const key of SERVER_METADATA) delete copy.metadata[key];
  return copy;
}

export interface ObjectFinding {
  /** `error`: the new version refuses the object (blocks); `warning`: it is admitted but loses a field on its next write, or its provider refuses it (BuildFailed). */
  readonly severity: 'error' | 'warning';
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** The field the API server would name; empty for the whole object. */
  readonly field: string;
  readonly message: string;
  readonly fix: string;
}

const identity = (o: Record<string, unknown>) => {
  const metadata = isRecord(o.metadata) ? o.metadata : {};
  return { kind: String(o.kind ?? ''), namespace: String(metadata.namespace ?? ''), name: String(metadata.name ?? '') };
};

/** What to do about one refused field: edit it in place (or in the GitOps source), then re-check. */
export function fixFor(kind: string, namespace: string, name: string, field: string): string {
  if (field === 'metadata.name' || field === 'metadata.namespace') {
    return `a ${field.slice('metadata.'.length)} cannot be edited: do what the message says (re-create the ${kind} or change the installation), then run nls preflight again`;
  }
  const what = field ? `correct ${field}` : 'correct the object';
  return `${what} (kubectl edit ${kind.toLowerCase()} ${name} -n ${namespace}, or in the manifests your GitOps tool applies), then run nls preflight again`;
}

/** Admits every stored object (a CREATE of its writable form); returns one finding per problem. */
export async function admitStoredObjects(
  stored: readonly Record<string, unknown>[],
  operatorNamespace: string,
  watchNamespaces: readonly string[],
): Promise<{ checked: number; findings: ObjectFinding[] }> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { admit } = require('../../admission') as typeof import('../../admission');
  // Objects being deleted are going away; the operator only runs their cleanup.
  const live = stored.filter((o) => !(isRecord(o.metadata) && o.metadata.deletionTimestamp)).map(writableForm);
  const findings: ObjectFinding[] = [];
  for (const object of live) {
    const others = live.filter((o) => o !== object);
    const result: AdmissionResult = await admit(object, { operatorNamespace, agentNamespaces: watchNamespaces, objects: others });
    const id = identity(object);
    for (const p of result.problems) {
      // The provider's refusal: the new version admits the object but does not serve it (BuildFailed), as this one may not either.
      const severity = p.source === 'provider' ? 'warning' : 'error';
      const message = p.source === 'provider' ? `admitted, but its provider refuses it, so the model reports BuildFailed and is not served: ${p.message}` : p.message;
      findings.push({ severity, ...id, field: p.field, message, fix: fixFor(id.kind, id.namespace, id.name, p.field) });
    }
    for (const field of result.unknownFields) {
      // The API server prunes an undeclared field and admits the write: a loss to report, not a refusal.
      findings.push({ severity: 'warning', ...id, field, message: `unknown field: this release does not declare it, so the API server drops it on the next write`, fix: `remove ${field} from the object and its source manifests` });
    }
  }
  return { checked: live.length, findings };
}

/** Every stored object of our kinds (paginated); kinds the API server does not serve are reported, not fatal. */
export async function listStoredObjects(rest: KubeRest): Promise<{ objects: Record<string, unknown>[]; notServed: string[] }> {
  const objects: Record<string, unknown>[] = [];
  const notServed: string[] = [];
  // AgentDeployments first: a model is created before the agents that reference it, so every
  // listed agent's model is in the model lists read after it, even while both are being written.
  for (const kind of ['AgentDeployment', 'LLMModel', 'PassthroughModel'] satisfies readonly (typeof STORED_KINDS)[number][]) {
    try {
      const list = await rest.list<KubeObject>(API_GROUP_VERSION, kind, { limit: 250 });
      objects.push(...(list.items as unknown as Record<string, unknown>[]));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      notServed.push(kind);
    }
  }
  return { objects, notServed };
}
