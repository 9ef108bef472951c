// LLMModel reconciler: fetch → (finalize on delete) → finalizer + API-key objects → the
// provider's objects (at the version detected as served; src/translate/providers) and the serving
// pods' PodMonitor (./pod-monitor) → the gateway objects (InferencePool, routes, auth policies) →
// phase from the workload's pods → status.
import { controllerOwnerKey } from './runtime/object-key';
import { API_GROUP_VERSION_V1BETA1 } from '../api/common';
import { LLMMODEL_KIND, llmModelProviderName } from '../api/llmmodel';
import { ObservedWorkload, ProviderContext, ProviderTranslation, ServedVersions, llmProvider } from '../translate/providers';
import { withAppliedDigest } from '../translate/applied-digest';
import { gatewayObjectKinds } from '../translate/gateway/objects';
import { ProviderVersions, describeMissing } from './provider-versions';
import { KeyObjectCache } from './key-object-cache';
import { ExternalEndpointPeers } from './endpoint-peers';
import { ProxyStatus } from './proxy-status';
import { deleteIfControlled, describeErrors, unservedKinds } from './generated-objects';
import { syncPodMonitor } from './pod-monitor';
import { finalizeModel, generatedObjectWatches, publishModel, revokeDueKeysUnpublished, type PublishWatches } from './model-shared';
import { DEFAULT_CLEANUP_BLOCKED_AFTER_MS, cleanupBlockedCondition, inspectBlockedWait } from './cleanup-blocked';
import { ReconcileDeps, recordTransitions, reportNotConfigured, requeue, writeStatus } from './reconcile-context';
import { applyEach, describeFailures, failureReason } from './runtime/apply';
import { ConditionInput } from './runtime/conditions';
import { ControllerOptions, ReconcileRequest, ReconcileResult } from './runtime/controller';
import { addFinalizer, hasFinalizer, isBeingDeleted } from './runtime/finalizer';
import { KubeObject, objectRef } from '../kube/rest';
import { Logger } from '../runtime/log';
import type { LLMModelV1beta1 } from '../api/v1beta1';

type LLMModelObject = LLMModelV1beta1 & KubeObject;

export interface LLMModelDeps extends ReconcileDeps {
  providers?: ProviderContext;
  /** Detects the served version of each provider kind (one instance shared by every reconcile). */
  providerVersions?: ProviderVersions;
  /**
   * The longest interval between two reads of the provider resource (NLS_PROVIDER_POLL_SECONDS):
   * a Ready model's poll; the faster polls (not Ready yet, deletion waiting) never exceed it.
   * @default requeue.providerStatus (60 s)
   */
  providerPollMs?: number;
}

interface PodObject extends KubeObject {
  status?: {
    phase?: string;
    conditions?: Array<{ type: string; status: string }>;
    initContainerStatuses?: Array<{ state?: { running?: unknown; waiting?: { reason?: string } } }>;
    containerStatuses?: Array<{ state?: { waiting?: { reason?: string } } }>;
  };
}

/** What the provider needs to compute the phase: the workload and its pods. */
async function observeWorkload(deps: ReconcileDeps, model: LLMModelObject, workload: { apiVersion: string; kind: string; name: string }, selector: Record<string, string> | undefined): Promise<ObservedWorkload> {
  const obj = await deps.client.get(objectRef(workload.apiVersion, workload.kind, workload.name, model.metadata.namespace));
  const labelSelector = Object.entries(selector ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
  const { items } = labelSelector ? await deps.client.list<PodObject>('v1', 'Pod', { namespace: model.metadata.namespace, labelSelector }) : { items: [] as PodObject[] };
  return {
    workload: obj as Record<string, unknown> | undefined,
    pods: items
      .filter((p) => !p.metadata.deletionTimestamp)
      .map((p) => {
        const waiting = [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])].find((c) => c.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing');
        return {
          phase: p.status?.phase,
          ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
          initializing: (p.status?.initContainerStatuses ?? []).some((c) => c.state?.running !== undefined),
          waitingReason: waiting?.state?.waiting?.reason,
        };
      }),
  };
}

export async function reconcileLLMModel(deps: LLMModelDeps, req: ReconcileRequest, log: Logger, watches: PublishWatches = {}): Promise<ReconcileResult> {
  const ref = objectRef(API_GROUP_VERSION_V1BETA1, LLMMODEL_KIND, req.name, req.namespace);
  // The informer's copy when it has one (no GET per pass); a miss is asked of the server.
  let model = (req.cached as LLMModelObject | undefined) ?? (await deps.client.get<LLMModelObject>(ref));
  if (!model) return {};
  model = { ...model, apiVersion: API_GROUP_VERSION_V1BETA1, kind: LLMMODEL_KIND };
  const d = { ...deps, log };

  if (isBeingDeleted(model)) {
    if (!hasFinalizer(model)) return {};
    // The provider's own resource goes first and is waited for (its operator may run cleanup
    // behind a finalizer); the rest carries owner references and goes with garbage collection.
    const providerWait = await finalizeProviderResource(d, model);
    if (providerWait) return { requeueAfterMs: providerWait };
    const wait = await finalizeModel(d, model, watches.keyObjects);
    return wait ? { requeueAfterMs: wait } : {};
  }
  if (deps.configurationProblem) {
    // Nothing is published, but keys that expire (or lose access) are still removed.
    const keysWait = await revokeDueKeysUnpublished(d, model, watches.keyObjects);
    const result = await reportNotConfigured(d, model, deps.configurationProblem);
    return keysWait === undefined ? result : { ...result, requeueAfterMs: keysWait };
  }
  model = await addFinalizer(deps.client, model);

  const providerName = llmModelProviderName(model.spec);
  const provider = llmProvider(providerName);

  // Which version of the provider's own kinds to write: detected from what is served now.
  const detection = provider.resources?.length ? await providerVersions(deps).detect(provider.resources) : undefined;
  const served: ServedVersions | undefined = detection?.served;
  const translation = withDigests(provider.translate(model, deps.providers ?? {}, served));
  const providerStatus = {
    name: providerName,
    ...(detection && !served ? {} : { apiVersion: translation.workload.apiVersion }),
    resourceKind: translation.workload.kind,
    resourceName: translation.workload.name,
  };
  const conditions: ConditionInput[] = [];
  let requeueAfterMs: number | undefined;
  let providerOk = false;
  if (detection && !served) {
    conditions.push({ type: 'ProviderReady', status: false, reason: 'ProviderCRDUnavailable', message: describeMissing(detection.missing) });
    requeueAfterMs = requeue.crdMissing;
  } else if (translation.errors.length > 0) {
    conditions.push({ type: 'ProviderReady', status: false, reason: 'BuildFailed', message: describeErrors(translation.errors) });
  } else {
    const missing = await unservedKinds(deps.client, translation.objects);
    if (missing.length > 0) {
      conditions.push({ type: 'ProviderReady', status: false, reason: 'ProviderCRDUnavailable', message: `the API server does not serve ${missing.join(', ')}; install the ${providerName} operator's CRDs` });
      requeueAfterMs = requeue.crdMissing;
    } else {
      const failures = await applyEach(deps.client, translation.objects);
      if (failures.length > 0) {
        conditions.push({ type: 'ProviderReady', status: false, reason: failureReason(failures), message: describeFailures(failures) });
        requeueAfterMs = failureReason(failures) === 'Conflict' ? requeue.conflict : requeue.applyFailed;
      } else {
        providerOk = true;
        conditions.push({ type: 'ProviderReady', status: true, reason: 'Applied', message: `${translation.objects.length} ${providerName} objects applied` });
        const monitoring = await syncPodMonitor(d, model, translation.podMonitor, providerPollMs(deps));
        if (monitoring.condition) conditions.push(monitoring.condition);
        requeueAfterMs = monitoring.requeueAfterMs;
      }
    }
  }

  const observed = providerOk ? await observeWorkload(d, model, translation.workload, translation.servingPool.selector) : { pods: [] };
  const servingPhase = providerOk ? provider.phase(model, observed) : undefined;
  const published = await publishModel(d, model, { servingPool: translation.servingPool }, watches);
  conditions.push(
    published.ok
      ? { type: 'InferencePoolReady', status: true, reason: 'Applied', message: 'InferencePool applied' }
      : { type: 'InferencePoolReady', status: false, reason: published.summary.reason, message: published.summary.message },
    ...published.conditions,
  );
  let phase = servingPhase?.phase ?? 'Error';
  if (phase === 'Ready' && !published.ok) phase = 'Degraded';
  if (servingPhase) conditions.push({ type: 'ModelServing', status: servingPhase.phase === 'Ready', reason: servingPhase.phase, message: servingPhase.message });

  const changed = await writeStatus(deps.client, model, {
    phase,
    conditions,
    extra: {
      provider: providerStatus,
      endpoints: published.endpoints,
      ...(servingPhase ? { replicas: { ready: servingPhase.ready, desired: servingPhase.desired } } : {}),
    },
  });
  await recordTransitions(deps.events, model, changed);

  // A provider's own resource is not watched (its kind and version are only known at run time):
  // its status is polled, quickly while the model is not Ready, slowly once it is.
  const pollMs = providerPollMs(deps);
  const polling = served ? (phase === 'Ready' ? pollMs : Math.min(requeue.podsProgressing, pollMs)) : undefined;
  const delays = [requeueAfterMs, published.requeueAfterMs, phase !== 'Ready' && servingPhase ? requeue.podsProgressing : undefined, polling].filter((n): n is number => n !== undefined);
  return delays.length ? { requeueAfterMs: Math.min(...delays) } : {};
}

/**
 * The provider's objects and PodMonitor, each carrying the digest of its body: no watch lists them,
 * so an unchanged object costs the poll one read instead of a write (runtime/apply.ts).
 */
function withDigests(translation: ProviderTranslation): ProviderTranslation {
  const podMonitor = translation.podMonitor?.object ? { ...translation.podMonitor, object: withAppliedDigest(translation.podMonitor.object) } : translation.podMonitor;
  return { ...translation, objects: translation.objects.map(withAppliedDigest), podMonitor };
}

function providerPollMs(deps: LLMModelDeps): number {
  return deps.providerPollMs ?? requeue.providerStatus;
}

function providerVersions(deps: LLMModelDeps): ProviderVersions {
  deps.providerVersions ??= new ProviderVersions(deps.client);
  return deps.providerVersions;
}

/**
 * Deletes the provider's own resource (KAITO Workspace, RayService, ...) and waits until it is
 * gone. A resource whose finalizers do not clear within the bound (NLS_CLEANUP_BLOCKED_SECONDS) is
 * reported on the model (ProviderReady and CleanupBlocked: the provider's operator must run to
 * finish its cleanup) instead of waiting silently; its finalizers are never removed.
 */
async function finalizeProviderResource(deps: LLMModelDeps, model: LLMModelObject): Promise<number | undefined> {
  const provider = llmProvider(llmModelProviderName(model.spec));
  if (!provider.resources?.length) return undefined;
  const detection = await providerVersions(deps).detect(provider.resources);
  if (!detection.served) return undefined; // the kind is not served: nothing of it can exist
  const { workload } = provider.translate(model, deps.providers ?? {}, detection.served);
  const ref = { apiVersion: workload.apiVersion, kind: workload.kind, name: workload.name, namespace: model.metadata.namespace ?? '' };
  if (!(await deleteIfControlled(deps.client, ref, model.metadata.uid))) return undefined; // not ours
  const existing = await deps.client.get(objectRef(ref.apiVersion, ref.kind, ref.name, ref.namespace));
  if (!existing) return undefined;
  const since = Date.parse(existing.metadata.deletionTimestamp ?? '') || Date.now();
  const finalizers = existing.metadata.finalizers ?? [];
  const boundMs = deps.cleanupBlockedAfterMs ?? DEFAULT_CLEANUP_BLOCKED_AFTER_MS;
  const wait = Date.now() - since >= boundMs && finalizers.length > 0 ? await inspectBlockedWait(deps.client, ref) : undefined;
  if (wait) {
    // Messages stay the same from pass to pass, so the status is written once.
    const message = `${ref.kind} ${ref.name} has been deleting for more than ${Math.round(boundMs / 1000)} s; its finalizers ${finalizers.join(', ')} have not cleared: the ${provider.name} operator must be running to finish its cleanup (or remove the finalizers by hand once its resources are gone)`;
    const conditions: ConditionInput[] = [{ type: 'ProviderReady', status: false, reason: 'ProviderFinalizerPending', message }, cleanupBlockedCondition(wait, Math.round(boundMs / 1000))];
    const changed = await writeStatus(deps.client, model, { phase: 'Error', conditions });
    await recordTransitions(deps.events, model, changed);
    if (changed.length > 0) deps.log.warn('provider resource stuck in deletion', { resource: `${ref.kind}/${ref.name}`, finalizers });
  }
  // The resource is not watched either: read it again, within the poll bound.
  return Math.min(requeue.deletionWait * 5, providerPollMs(deps));
}

export function llmModelController(deps: LLMModelDeps, namespace: string): ControllerOptions {
  // Models live in the operator namespace only (the webhook admits them nowhere else): list and
  // watch there, with the namespaced rights the chart grants.
  const peers = new ExternalEndpointPeers(LLMMODEL_KIND);
  const proxyStatus = new ProxyStatus(deps.client, LLMMODEL_KIND, deps.gateway);
  const keyObjects = new KeyObjectCache(LLMMODEL_KIND);
  return {
    apiVersion: API_GROUP_VERSION_V1BETA1,
    kind: LLMMODEL_KIND,
    namespace,
    reconcile: (req, log) => reconcileLLMModel(deps, req, log, { peers, proxyStatus, keyObjects }),
    secondary: [
      keyObjects.secretWatch(namespace),
      keyObjects.metadataWatch(namespace),
      // The models on the external endpoint, whose keys this kind's external policies accept.
      ...peers.watches(namespace),
      // The generated HTTPRoutes and the Gateways' proxies, for Programmed.
      ...proxyStatus.watches(namespace),
      { apiVersion: 'apps/v1', kind: 'Deployment', labelSelector: 'app.kubernetes.io/managed-by=nebari-llm-serving,llm.nebari.dev/role=serving', map: (obj: KubeObject) => controllerOwnerKey(obj, LLMMODEL_KIND) },
      ...generatedObjectWatches(LLMMODEL_KIND, gatewayObjectKinds('AIGatewayRoute', 'SecurityPolicy', 'InferencePool', 'BackendTrafficPolicy')),
    ],
  };
}
