// Waiting for the cluster, with progress: a poll loop that reports each change of status, and
// the observations the lifecycle commands wait on (a finished rollout with only new pods behind
// the webhook Service, the serving CA in its Secret, every AgentDeployment webhook trusting it,
// and whether the API server enforces the upgrade guard). Observations are plain reads; nothing
// here writes.
import type { KubeObject, KubeRest } from '../../kube/rest';
import { API_GROUP_VERSION_V1BETA1 } from '../../api/common';

export interface Observation {
  readonly done: boolean;
  /** One line on where things stand, printed when it changes. */
  readonly status: string;
}

export interface WaitOptions {
  readonly timeoutMs: number;
  /** @default 500 */
  readonly intervalMs?: number;
  readonly report?: (line: string) => void;
}

export class WaitTimeout extends Error {
  constructor(
    readonly what: string,
    readonly lastStatus: string,
    timeoutMs: number,
  ) {
    super(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}; last seen: ${lastStatus}`);
    this.name = 'WaitTimeout';
  }
}

/** Polls `observe` until done; prints each new status; throws WaitTimeout naming the last status. */
export async function waitUntil(what: string, observe: () => Promise<Observation>, options: WaitOptions): Promise<string> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  let last = '';
  for (;;) {
    let observation: Observation;
    try {
      observation = await observe();
    } catch (error) {
      observation = { done: false, status: `cannot read yet: ${(error as Error).message}` };
    }
    if (observation.status !== last) {
      options.report?.(`${observation.done ? 'ok' : 'waiting'}: ${observation.status} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      last = observation.status;
    }
    if (observation.done) return last;
    if (Date.now() >= deadline) throw new WaitTimeout(what, last, options.timeoutMs);
    await new Promise((resolve) => setTimeout(resolve, Math.min(options.intervalMs ?? 500, Math.max(0, deadline - Date.now()))));
  }
}

type Obj = KubeObject & {
  metadata: { name?: string; namespace?: string; generation?: number; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: { uid: string }[]; uid?: string };
};

interface DeploymentObject extends Obj {
  spec: { replicas?: number; selector?: { matchLabels?: Record<string, string> } };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number; readyReplicas?: number };
}

const revisionAnnotation = 'deployment.kubernetes.io/revision';

/**
 * Rollout finished: the Deployment controller saw the latest spec, every replica is updated and
 * available, no old replica is left, and every endpoint of `service` is a pod of the new
 * ReplicaSet (at least one of them ready). This is the "only new pods behind the webhook
 * Service" condition: `rollout status` alone can pass while old pods still serve.
 */
export async function observeRollout(rest: KubeRest, namespace: string, deployment: string, service: string): Promise<Observation> {
  const dep = (await rest.get({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: deployment, namespace } })) as DeploymentObject | undefined;
  if (!dep) return { done: false, status: `Deployment ${namespace}/${deployment} does not exist` };
  const want = dep.spec.replicas ?? 1;
  const s = dep.status ?? {};
  if ((s.observedGeneration ?? 0) < (dep.metadata.generation ?? 0)) return { done: false, status: 'the Deployment controller has not seen the latest spec' };
  const counts = `${s.updatedReplicas ?? 0}/${want} updated, ${s.availableReplicas ?? 0}/${want} available, ${s.replicas ?? 0} total`;
  if ((s.updatedReplicas ?? 0) < want || (s.availableReplicas ?? 0) < want || (s.replicas ?? 0) > (s.updatedReplicas ?? 0)) {
    return { done: false, status: `rollout: ${counts}` };
  }
  const revision = dep.metadata.annotations?.[revisionAnnotation];
  const sets = await rest.list<Obj>('apps/v1', 'ReplicaSet', { namespace, labelSelector: selectorString(dep.spec.selector?.matchLabels ?? {}) });
  const current = sets.items.find((rs) => rs.metadata.ownerReferences?.some((o) => o.uid === dep.metadata.uid) && rs.metadata.annotations?.[revisionAnnotation] === revision);
  const hash = current?.metadata.labels?.['pod-template-hash'];
  if (!hash) return { done: false, status: `rollout: ${counts}; the ReplicaSet of revision ${revision ?? '?'} is not visible yet` };
  const pods = await rest.list<Obj>('v1', 'Pod', { namespace, labelSelector: selectorString({ ...(dep.spec.selector?.matchLabels ?? {}), 'pod-template-hash': hash }) });
  const newPods = new Set(pods.items.map((p) => p.metadata.name));
  const endpoints = await serviceEndpoints(rest, namespace, service);
  const foreign = endpoints.filter((e) => !e.pod || !newPods.has(e.pod));
  const ready = endpoints.filter((e) => e.ready && e.pod && newPods.has(e.pod));
  if (foreign.length > 0) {
    return { done: false, status: `rollout: ${counts}; Service ${service} still has ${foreign.length} endpoint(s) outside the new ReplicaSet (${foreign.map((e) => e.pod ?? e.address).join(', ')})` };
  }
  if (ready.length === 0) return { done: false, status: `rollout: ${counts}; Service ${service} has no ready endpoint yet` };
  return { done: true, status: `rollout complete: ${counts}; Service ${service} has ${ready.length} ready endpoint(s), all new pods (revision ${revision})` };
}

export interface ServiceEndpoint {
  readonly address: string;
  readonly pod?: string;
  readonly ready: boolean;
}

/** Every endpoint of a Service from its EndpointSlices (terminating ones included, not ready). */
export async function serviceEndpoints(rest: KubeRest, namespace: string, service: string): Promise<ServiceEndpoint[]> {
  const slices = await rest.list<Obj & { endpoints?: { addresses: string[]; conditions?: { ready?: boolean }; targetRef?: { kind?: string; name?: string } }[] }>(
    'discovery.k8s.io/v1',
    'EndpointSlice',
    { namespace, labelSelector: `kubernetes.io/service-name=${service}` },
  );
  return slices.items.flatMap((slice) =>
    (slice.endpoints ?? []).map((e) => ({
      address: e.addresses[0] ?? '',
      pod: e.targetRef?.kind === 'Pod' ? e.targetRef.name : undefined,
      // A missing ready condition means ready (EndpointSlice API semantics).
      ready: e.conditions?.ready !== false,
    })),
  );
}

function selectorString(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** The serving CA (`ca.crt`, base64 as stored) of the webhook Secret; undefined while absent. */
export async function servingCa(rest: KubeRest, namespace: string, secret: string): Promise<string | undefined> {
  const s = (await rest.get({ apiVersion: 'v1', kind: 'Secret', metadata: { name: secret, namespace } })) as (Obj & { data?: Record<string, string> }) | undefined;
  return s?.data?.['ca.crt'] || undefined;
}

export interface WebhookEntry {
  readonly configuration: string;
  readonly kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';
  readonly name: string;
  readonly caBundle: string;
  readonly resources: string[];
}

/** Every webhook entry of the named configurations (either kind; missing ones skipped). */
export async function webhookEntries(rest: KubeRest, names: readonly string[]): Promise<WebhookEntry[]> {
  const entries: WebhookEntry[] = [];
  for (const name of names) {
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'] as const) {
      const config = (await rest.get({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name } })) as
        | (Obj & { webhooks?: { name: string; clientConfig?: { caBundle?: string }; rules?: { resources?: string[] }[] }[] })
        | undefined;
      for (const w of config?.webhooks ?? []) {
        entries.push({ configuration: name, kind, name: w.name, caBundle: w.clientConfig?.caBundle ?? '', resources: (w.rules ?? []).flatMap((r) => r.resources ?? []) });
      }
    }
  }
  return entries;
}

/** The serving CA exists and every AgentDeployment webhook entry (both kinds) carries exactly it. */
export async function observeAgentDeploymentTrust(rest: KubeRest, namespace: string, secret: string, configurations: readonly string[]): Promise<Observation> {
  const ca = await servingCa(rest, namespace, secret);
  if (!ca) return { done: false, status: `Secret ${namespace}/${secret} has no ca.crt yet` };
  const entries = (await webhookEntries(rest, configurations)).filter((e) => e.resources.includes('agentdeployments'));
  const kinds = new Set(entries.map((e) => e.kind));
  if (!kinds.has('ValidatingWebhookConfiguration') || !kinds.has('MutatingWebhookConfiguration')) {
    return { done: false, status: `the AgentDeployment validating and mutating webhooks are not both in ${configurations.join(', ')} yet` };
  }
  const stale = entries.filter((e) => e.caBundle !== ca);
  if (stale.length > 0) return { done: false, status: `caBundle of ${stale.map((e) => `${e.configuration}/${e.name}`).join(', ')} does not equal the serving CA yet` };
  return { done: true, status: `serving CA in ${secret}; caBundle equals it in ${entries.map((e) => `${e.configuration}/${e.name}`).join(', ')}` };
}

/** A dry-run AgentDeployment CREATE in `namespace`: denied by the guard webhook named `guardWebhook`? */
export async function guardDenies(rest: KubeRest, namespace: string, guardWebhook: string): Promise<{ denied: boolean; answer: string }> {
  const probe = { apiVersion: API_GROUP_VERSION_V1BETA1, kind: 'AgentDeployment', metadata: { name: 'nls-upgrade-guard-probe', namespace }, spec: {} };
  try {
    await rest.create(probe, { dryRun: true, fieldManager: 'nebari-llm-serving-cli' });
    return { denied: false, answer: 'a dry-run AgentDeployment create was admitted' };
  } catch (error) {
    const message = (error as Error).message;
    return { denied: message.includes(guardWebhook), answer: message.replace(/\s+/g, ' ').slice(0, 240) };
  }
}

export async function observeGuardEnforced(rest: KubeRest, namespace: string, guardWebhook: string): Promise<Observation> {
  const { denied, answer } = await guardDenies(rest, namespace, guardWebhook);
  return denied ? { done: true, status: 'the API server denies AgentDeployment writes through the guard' } : { done: false, status: `the guard does not bite yet (${answer})` };
}

export async function observeGuardGone(rest: KubeRest, namespace: string, guardName: string, guardWebhook: string): Promise<Observation> {
  const config = await rest.get({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: guardName } });
  if (config) return { done: false, status: `MutatingWebhookConfiguration ${guardName} still exists` };
  const { denied } = await guardDenies(rest, namespace, guardWebhook);
  return denied ? { done: false, status: 'the API server still calls the guard' } : { done: true, status: 'guard removed; AgentDeployment writes reach the validator again' };
}
