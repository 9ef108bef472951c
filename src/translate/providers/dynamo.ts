// The NVIDIA Dynamo provider: one DynamoGraphDeployment (nvidia.com/v1alpha1) holding a Dynamo
// frontend (the OpenAI HTTP server, port 8000) and an aggregated vLLM worker component that serves
// the Hugging Face model, plus the volume that keeps the Hugging Face cache and the endpoint picker
// the InferencePool consults. Dynamo's own operator turns the graph into Deployments and Services;
// the phase is read back from the graph's status (state, Ready condition, per-component replicas).
import { LLMMODEL_DEFAULTS } from '../../api/llmmodel';
import { tracingEngineSettings } from '../../api/tracing';
import { translationError, TranslationError } from '../gateway/errors';
import { defaultServingPodSelector, SERVING_POD_MODEL_LABEL, SERVING_POD_ROLE_LABEL } from '../gateway/llmmodel';
import { boundedName, gatewayObjectNames } from '../gateway/names';
import { FATAL_WAITING_REASONS, LLMProvider, Manifest, ObservedWorkload, ProviderContext, ProviderPhase, ProviderResource, ProviderTranslation, ServedVersions } from './provider';
import { EPP_GRPC_PORT, dns1035Name, modelCacheClaim, endpointPickerNames, endpointPickerObjects, gpuResourceName, mergeOverrides, providerMetadata } from './serving-objects';
import type { LLMModelV1beta1 } from '../../api/v1beta1';

export const DYNAMO_GROUP = 'nvidia.com';
export const DYNAMO_KIND = 'DynamoGraphDeployment';
/**
 * Versions of DynamoGraphDeployment this build writes. Released Dynamo (v1.0.x) serves only
 * v1alpha1. The v1beta1 on upstream main (a list of components with a pod template) is not written:
 * its status, backend selection and admission were not available to verify against (see
 * docs/providers.md); main still serves v1alpha1 through its conversion webhook.
 */
export const DYNAMO_VERSIONS = ['v1alpha1'] as const;
export const DYNAMO_API_VERSION = `${DYNAMO_GROUP}/${DYNAMO_VERSIONS[0]}`;

/** Port of the Dynamo frontend's OpenAI-compatible HTTP server (container port `http`). */
export const DYNAMO_FRONTEND_PORT = 8000;
/** Keys of `spec.services`; Dynamo names each component's objects `<graph>-<lowercase key>`. */
export const DYNAMO_FRONTEND = 'Frontend';
export const DYNAMO_WORKER = 'VllmWorker';
/** Label on the graph's pods telling the frontend (which the InferencePool targets) from the workers. */
export const DYNAMO_COMPONENT_LABEL = 'llm.nebari.dev/dynamo-component';
export const DYNAMO_WORKER_COMMAND = ['python3', '-m', 'dynamo.vllm'];
/** Where the worker keeps the Hugging Face cache (HF_HOME), on the model-cache volume. */
export const DYNAMO_CACHE_MOUNT = '/models';
/**
 * Longest graph name: Dynamo derives `<graph>-<component>` (and a further suffix for workers) for
 * the Deployments and Services it creates, which must stay within 63 characters.
 */
export const DYNAMO_GRAPH_NAME_MAX = 40;

export const DYNAMO_RESOURCE: ProviderResource = {
  group: DYNAMO_GROUP,
  kind: DYNAMO_KIND,
  versions: DYNAMO_VERSIONS,
  installHint:
    'install NVIDIA Dynamo (its platform Helm chart installs the Dynamo operator and the nvidia.com DynamoGraphDeployment CRD, v1.0 or later) in the cluster',
};

/**
 * The DynamoGraphDeployment's name: the model name when it already is a DNS-1035 label of at
 * most 40 characters (Dynamo's Service names derive from it); otherwise a label made from it
 * (dots become hyphens, a leading digit gets an `m-` prefix) cut to fit, with a hash of the full
 * name so that distinct models keep distinct graphs.
 */
export function dynamoGraphName(modelName: string): string {
  return dns1035Name(modelName, DYNAMO_GRAPH_NAME_MAX);
}

/** Names of the objects the Dynamo provider creates, and of the frontend Service Dynamo creates. */
export function dynamoObjectNames(modelName: string) {
  const graph = dynamoGraphName(modelName);
  return {
    graph,
    /** Created by Dynamo's operator: `<graph>-frontend`, port 8000. */
    frontendService: `${graph}-${DYNAMO_FRONTEND.toLowerCase()}`,
    pvc: boundedName(modelName, 'model-cache'),
    ...endpointPickerNames(modelName),
  };
}

/** Labels put on the frontend pods; the InferencePool selects them. */
export function dynamoServingSelector(modelName: string): Record<string, string> {
  return { ...defaultServingPodSelector(modelName), [DYNAMO_COMPONENT_LABEL]: 'frontend' };
}

/** Arguments of `python3 -m dynamo.vllm`: the Hugging Face model, parallelism, then the user's engine arguments. */
export function dynamoWorkerArgs(model: LLMModelV1beta1): string[] {
  const spec = model.spec;
  const tp = spec.serving?.tensorParallelism ?? Math.max(spec.resources.gpu.count, 1);
  const dp = spec.serving?.dataParallelism ?? LLMMODEL_DEFAULTS.dataParallelism;
  return [
    '--model',
    spec.model.name,
    ...(spec.model.revision ? ['--revision', spec.model.revision] : []),
    '--tensor-parallel-size',
    String(tp),
    ...(dp > 1 ? ['--data-parallel-size', String(dp)] : []),
    ...tracingEngineSettings(spec.observability?.tracing, model.metadata.name ?? '').args,
    ...(spec.serving?.engineArgs ?? []),
  ];
}

function check(model: LLMModelV1beta1): TranslationError[] {
  const errors: TranslationError[] = [];
  const spec = model.spec;
  if (spec.model.source !== 'huggingface') {
    errors.push(
      translationError(
        'spec.model.source',
        `${spec.model.source} is not supported by the dynamo provider: Dynamo's vLLM worker loads the model from Hugging Face; set spec.model.source to huggingface, or serve the OCI image with spec.provider.name vllm`,
      ),
    );
  }
  if (spec.resources.gpu.count === 0) {
    errors.push(
      translationError('spec.resources.gpu.count', "0 (CPU serving) is not supported by the dynamo provider: Dynamo's vLLM worker runs on GPUs; request at least one GPU or use spec.provider.name vllm"),
    );
  }
  const tp = spec.serving?.tensorParallelism;
  if (tp !== undefined && spec.resources.gpu.count > 0 && tp > spec.resources.gpu.count) {
    errors.push(translationError('spec.serving.tensorParallelism', `${tp} is larger than spec.resources.gpu.count (${spec.resources.gpu.count}); lower it or request more GPUs`));
  }
  if (!spec.serving?.image) {
    errors.push(
      translationError(
        'spec.serving.image',
        'is required by the dynamo provider: set it to the Dynamo vLLM runtime image (ai-dynamo/vllm-runtime) of the Dynamo release installed in the cluster; it runs both the frontend and the vLLM worker',
      ),
    );
  }
  return errors;
}

/** spec.resources requests/limits in Dynamo's shape: cpu and memory, other names under custom, all strings. */
function dynamoResourceList(list: Record<string, string | number> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const custom: Record<string, string> = {};
  for (const [name, value] of Object.entries(list ?? {})) {
    if (name === 'cpu' || name === 'memory') out[name] = String(value);
    else custom[name] = String(value);
  }
  return Object.keys(custom).length > 0 ? { ...out, custom } : out;
}

export function translateDynamo(model: LLMModelV1beta1, context: ProviderContext, served?: ServedVersions): ProviderTranslation {
  const name = model.metadata.name ?? '';
  const names = dynamoObjectNames(name);
  const apiVersion = served?.[DYNAMO_KIND] ?? DYNAMO_API_VERSION;
  const selector = dynamoServingSelector(name);
  const servingPool = { selector, targetPort: DYNAMO_FRONTEND_PORT, endpointPickerPort: EPP_GRPC_PORT };
  const workload = { apiVersion, kind: DYNAMO_KIND, name: names.graph };
  const errors = check(model);
  if (errors.length > 0) return { objects: [], workload, servingPool, errors };

  const spec = model.spec;
  const storageType = spec.model.storage?.type ?? LLMMODEL_DEFAULTS.storageType;
  const gpus = spec.resources.gpu.count;
  const gpuName = gpuResourceName(spec.resources.gpu.type);
  const replicas = spec.serving?.replicas ?? LLMMODEL_DEFAULTS.replicas;
  const modelLabel = gatewayObjectNames(name).modelLabel;
  const objects: Manifest[] = [];

  if (storageType === 'pvc') {
    objects.push(modelCacheClaim(model, context, names.pvc));
  }

  const secret = spec.model.authSecretName ? { envFromSecret: spec.model.authSecretName } : {};
  const cacheVolume = storageType === 'pvc' ? { name: 'model-cache', persistentVolumeClaim: { claimName: names.pvc } } : { name: 'model-cache', emptyDir: {} };
  const limits: Record<string, unknown> = {
    ...dynamoResourceList(spec.resources.limits),
    gpu: String(gpus),
    ...(gpuName !== 'nvidia.com/gpu' ? { gpuType: gpuName } : {}),
  };
  const requests = dynamoResourceList(spec.resources.requests);
  const tolerations = [{ key: gpuName, operator: 'Exists', effect: 'NoSchedule' }, ...(spec.scheduling?.tolerations ?? [])];
  const image = spec.serving?.image ?? '';

  const graph: Manifest = {
    apiVersion,
    kind: DYNAMO_KIND,
    metadata: providerMetadata(model, names.graph, 'serving'),
    spec: {
      backendFramework: 'vllm',
      services: {
        [DYNAMO_FRONTEND]: {
          componentType: 'frontend',
          replicas: replicas > 0 ? 1 : 0,
          ...secret,
          extraPodMetadata: { labels: selector },
          extraPodSpec: { mainContainer: { image } },
        },
        [DYNAMO_WORKER]: {
          componentType: 'worker',
          replicas,
          ...secret,
          envs: [{ name: 'HF_HOME', value: DYNAMO_CACHE_MOUNT }, ...tracingEngineSettings(spec.observability?.tracing, name).env, ...(spec.serving?.env ?? [])],
          resources: { ...(Object.keys(requests).length > 0 ? { requests } : {}), limits },
          extraPodMetadata: { labels: { [SERVING_POD_MODEL_LABEL]: modelLabel, [SERVING_POD_ROLE_LABEL]: 'serving', [DYNAMO_COMPONENT_LABEL]: 'worker' } },
          extraPodSpec: {
            mainContainer: {
              image,
              command: spec.serving?.command ?? DYNAMO_WORKER_COMMAND,
              args: dynamoWorkerArgs(model),
              volumeMounts: [{ name: 'model-cache', mountPath: DYNAMO_CACHE_MOUNT }],
            },
            volumes: [cacheVolume],
            tolerations,
            ...(spec.scheduling?.nodeSelector ? { nodeSelector: spec.scheduling.nodeSelector } : {}),
            ...(spec.scheduling?.affinity ? { affinity: spec.scheduling.affinity } : {}),
          },
        },
      },
    },
  };
  objects.push(mergeOverrides(graph, spec.provider?.overrides));
  objects.push(...endpointPickerObjects(model, context));
  return { objects, workload, servingPool, errors: [] };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * The phase from the DynamoGraphDeployment's status: `state` (initializing, pending, successful,
 * failed), the `Ready` condition's message, and the worker component's ready replicas; a frontend
 * pod stuck on its image or crashing is reported too.
 */
export function dynamoPhase(model: LLMModelV1beta1, observed: ObservedWorkload): ProviderPhase {
  const desired = model.spec.serving?.replicas ?? LLMMODEL_DEFAULTS.replicas;
  const graphName = dynamoGraphName(model.metadata.name ?? '');
  const dgd = observed.workload;
  if (!dgd) return { phase: 'Pending', ready: 0, desired, message: `waiting for DynamoGraphDeployment ${graphName} to be created` };
  const status = record(dgd.status);
  const state = typeof status?.state === 'string' ? status.state : undefined;
  if (!status || !state) {
    return { phase: 'Pending', ready: 0, desired, message: `the Dynamo operator has not reported a status for DynamoGraphDeployment ${graphName}; check that it is installed and running` };
  }
  const conditions = Array.isArray(status.conditions) ? status.conditions.map(record) : [];
  const readyCondition = conditions.find((c) => c?.type === 'Ready');
  const dynamoMessage = typeof readyCondition?.message === 'string' && readyCondition.message ? readyCondition.message : undefined;
  const said = (fallback: string) => `Dynamo: ${dynamoMessage ?? fallback}`;
  const worker = record(record(status.services)?.[DYNAMO_WORKER]);
  const successful = state === 'successful' && readyCondition?.status !== 'False';
  const ready = count(worker?.readyReplicas) ?? (successful ? desired : 0);
  const counts = `${ready}/${desired} vLLM workers ready`;

  if (state === 'failed') {
    return { phase: ready > 0 ? 'Degraded' : 'Error', ready, desired, message: `DynamoGraphDeployment ${graphName} failed (${said('no reason given')})` };
  }
  const fatal = observed.pods.find((p) => p.waitingReason && FATAL_WAITING_REASONS.includes(p.waitingReason));
  if (fatal) return { phase: ready > 0 ? 'Degraded' : 'Error', ready, desired, message: `a Dynamo frontend pod is stuck: ${fatal.waitingReason}` };
  const generation = count(record(dgd.metadata)?.generation);
  const observedGeneration = count(status.observedGeneration);
  if (generation !== undefined && observedGeneration !== undefined && observedGeneration < generation) {
    return { phase: 'Starting', ready, desired, message: `the Dynamo operator has not reconciled generation ${generation} of DynamoGraphDeployment ${graphName} yet (status is for ${observedGeneration})` };
  }
  if (desired === 0) return { phase: 'Ready', ready, desired, message: 'scaled to zero replicas' };
  if (successful) return { phase: 'Ready', ready, desired, message: `${counts} (${said('all resources are ready')})` };
  if (state === 'initializing') return { phase: 'Pending', ready, desired, message: `Dynamo is initializing DynamoGraphDeployment ${graphName} (${said('no details yet')})` };
  return { phase: ready > 0 ? 'Degraded' : 'Starting', ready, desired, message: `${counts} (${said(`state ${state}`)})` };
}

export const dynamoProvider: LLMProvider = {
  name: 'dynamo',
  defaultsTensorParallelism: true,
  resources: [DYNAMO_RESOURCE],
  translate: translateDynamo,
  phase: dynamoPhase,
};
