// LLMModel reconciler: fetch → (finalize on delete) → finalizer + API-key objects → the
// provider's objects (direct vLLM today: PVC, Deployment, Service, endpoint picker) → the gateway
// objects (InferencePool, routes, auth policies) → phase from the workload's pods → status.
import { controllerOwnerKey } from './runtime/object-key';
import { API_GROUP_VERSION } from '../api/common';
import { LLMMODEL_KIND, LLMModel, llmModelProviderName } from '../api/llmmodel';
import { ObservedWorkload, ProviderContext, llmProvider } from '../translate/providers';
import { apiKeySecretWatch } from './keys';
import { describeErrors, unservedKinds } from './gateway-sync';
import { finalizeModel, generatedObjectWatches, publishModel } from './model-gateway';
import { ReconcileDeps, recordTransitions, reportNotConfigured, requeue, writeStatus } from './reconcile-context';
import { applyObject } from './runtime/apply';
import { ConditionInput } from './runtime/conditions';
import { ControllerOptions, ReconcileRequest, ReconcileResult } from './runtime/controller';
import { addFinalizer, hasFinalizer, isBeingDeleted } from './runtime/finalizer';
import { KubeObject, objectRef } from '../kube/rest';
import { Logger } from './runtime/log';

type LLMModelObject = LLMModel & KubeObject;

export interface LLMModelDeps extends ReconcileDeps {
  providers?: ProviderContext;
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

export async function reconcileLLMModel(deps: LLMModelDeps, req: ReconcileRequest, log: Logger): Promise<ReconcileResult> {
  const ref = objectRef(API_GROUP_VERSION, LLMMODEL_KIND, req.name, req.namespace);
  let model = await deps.client.get<LLMModelObject>(ref);
  if (!model) return {};
  model = { ...model, apiVersion: API_GROUP_VERSION, kind: LLMMODEL_KIND };
  const d = { ...deps, log };

  if (isBeingDeleted(model)) {
    if (!hasFinalizer(model)) return {};
    // Provider objects carry owner references: garbage collection removes them.
    const wait = await finalizeModel(d, model);
    return wait ? { requeueAfterMs: wait } : {};
  }
  if (deps.configurationProblem) return reportNotConfigured(d, model, deps.configurationProblem);
  model = await addFinalizer(deps.client, model);

  const providerName = llmModelProviderName(model.spec);
  const provider = llmProvider(providerName);
  if (!provider) {
    const message = `spec.provider.name: the ${providerName} provider is not implemented in this operator version yet; use vllm`;
    const changed = await writeStatus(deps.client, model, {
      phase: 'Error',
      conditions: [{ type: 'ProviderReady', status: false, reason: 'ProviderNotImplemented', message }],
      extra: { provider: { name: providerName } },
    });
    await recordTransitions(deps.events, model, changed);
    return {};
  }

  const translation = provider.translate(model, deps.providers ?? {});
  const providerStatus = { name: providerName, resourceKind: translation.workload.kind, resourceName: translation.workload.name };
  const conditions: ConditionInput[] = [];
  let requeueAfterMs: number | undefined;
  let providerOk = false;
  if (translation.errors.length > 0) {
    conditions.push({ type: 'ProviderReady', status: false, reason: 'BuildFailed', message: describeErrors(translation.errors) });
  } else {
    const missing = await unservedKinds(deps.client, translation.objects);
    if (missing.length > 0) {
      conditions.push({ type: 'ProviderReady', status: false, reason: 'ProviderCRDUnavailable', message: `the API server does not serve ${missing.join(', ')}; install the ${providerName} operator's CRDs` });
      requeueAfterMs = requeue.crdMissing;
    } else {
      const failures: string[] = [];
      for (const obj of translation.objects) {
        try {
          await applyObject(deps.client, obj as unknown as KubeObject);
        } catch (err) {
          failures.push(`${obj.kind} ${obj.metadata.name}: ${(err as Error).message}`);
        }
      }
      if (failures.length > 0) {
        conditions.push({ type: 'ProviderReady', status: false, reason: 'ApplyFailed', message: failures.join('; ') });
        requeueAfterMs = requeue.applyFailed;
      } else {
        providerOk = true;
        conditions.push({ type: 'ProviderReady', status: true, reason: 'Applied', message: `${translation.objects.length} ${providerName} objects applied` });
      }
    }
  }

  const observed = providerOk ? await observeWorkload(d, model, translation.workload, translation.servingPool.selector) : { pods: [] };
  const servingPhase = providerOk ? provider.phase(model, observed) : undefined;
  const published = await publishModel(d, model, { servingPool: translation.servingPool });
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

  const delays = [requeueAfterMs, published.requeueAfterMs, phase !== 'Ready' && servingPhase ? requeue.podsProgressing : undefined].filter((n): n is number => n !== undefined);
  return delays.length ? { requeueAfterMs: Math.min(...delays) } : {};
}

export function llmModelController(deps: LLMModelDeps, secretNamespace: string): ControllerOptions {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: LLMMODEL_KIND,
    reconcile: (req, log) => reconcileLLMModel(deps, req, log),
    secondary: [
      apiKeySecretWatch(LLMMODEL_KIND, secretNamespace),
      { apiVersion: 'apps/v1', kind: 'Deployment', labelSelector: 'app.kubernetes.io/managed-by=nebari-llm-serving,llm.nebari.dev/role=serving', map: (obj: KubeObject) => controllerOwnerKey(obj, LLMMODEL_KIND) },
      ...generatedObjectWatches(LLMMODEL_KIND, [
        { apiVersion: 'aigateway.envoyproxy.io/v1beta1', kind: 'AIGatewayRoute' },
        { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'SecurityPolicy' },
        { apiVersion: 'inference.networking.k8s.io/v1', kind: 'InferencePool' },
      ]),
    ],
  };
}
