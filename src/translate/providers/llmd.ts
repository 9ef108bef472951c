// The llm-d provider: the model is served the way llm-d serves it. vLLM model-server pods (the
// direct vLLM provider's PVC, Deployment and Service, plus the pod labels llm-d's scheduler and
// tooling key on) sit behind the model's InferencePool, whose endpoint picker is llm-d's inference
// scheduler (the llm-d router's EPP, with its prefix-cache- and load-aware scorers), and an llm-d
// `InferenceObjective` names the pool so the scheduler's flow control knows the model's priority.
// Prefill/decode disaggregation is not modelled by LLMModel: every pod serves both roles.
import { LLMMODEL_DEFAULTS } from '../../api/llmmodel';
import { translationError, TranslationError } from '../gateway/errors';
import { boundedName, gatewayObjectNames } from '../gateway/names';
import { INFERENCE_API_GROUP } from '../gateway/objects';
import { LLMProvider, Manifest, ProviderContext, ProviderResource, ProviderTranslation, ServedVersions, phaseFromPods } from './provider';
import { endpointPickerConfigAnnotations, endpointPickerConfigMap, mergeOverrides, providerMetadata } from './serving-objects';
import { translateVLLM, vllmObjectNames } from './vllm';
import type { LLMModelV1beta1 } from '../../api/v1beta1';

/** API group of the llm-d router's own kinds (InferenceObjective, InferenceModelRewrite). */
export const LLMD_API_GROUP = 'llm-d.ai';
export const INFERENCE_OBJECTIVE_KIND = 'InferenceObjective';
/** InferenceObjective versions this build writes, newest first (llm-d router v0.10.0 serves only v1alpha2). */
export const INFERENCE_OBJECTIVE_VERSIONS = ['v1alpha2'] as const;

/**
 * llm-d's scheduler is an endpoint picker with llm-d's plugins, published by the llm-d project as
 * llm-d-router-endpoint-picker (v0.10.0 matches the CRDs this build is tested against). The
 * default stays the upstream Inference Extension picker every provider uses, which serves the pool
 * without llm-d's plugins: point the chart value providers.endpointPicker.image at llm-d's image
 * (or a mirror) to schedule with them.
 */
export const LLMD_SCHEDULER_IMAGE_NAME = 'llm-d-router-endpoint-picker';

/** `"true"` on every model-server pod; llm-d's guides select pools and pods by it (older spelling). */
export const LLMD_INFERENCE_SERVING_LABEL = 'llm-d.ai/inferenceServing';
/** The same marker in the spelling llm-d's current guides and recipes use. */
export const LLMD_INFERENCE_SERVING_LABEL_V2 = 'llm-d.ai/inference-serving';
/** The model a pod serves (llm-d's dashboards and cost tooling group by it). */
export const LLMD_MODEL_LABEL = 'llm-d.ai/model';
/** prefill, decode or both: read by the scheduler's prefill/decode filters. */
export const LLMD_ROLE_LABEL = 'llm-d.ai/role';
/** The role of a pod that serves whole requests (the decode filter accepts it; no P/D split). */
export const LLMD_ROLE_BOTH = 'both';

export const LLMD_RESOURCES: readonly ProviderResource[] = [
  {
    group: LLMD_API_GROUP,
    kind: INFERENCE_OBJECTIVE_KIND,
    versions: INFERENCE_OBJECTIVE_VERSIONS,
    installHint: 'install the llm-d router CRDs (inferenceobjectives.llm-d.ai and inferencemodelrewrites.llm-d.ai, llm-d router v0.10.0 or later)',
  },
];

/** Names of the objects the llm-d provider creates for `modelName`. */
export function llmdObjectNames(modelName: string) {
  return { ...vllmObjectNames(modelName), inferenceObjective: boundedName(modelName) };
}

/** The llm-d labels of the model's serving pods. */
export function llmdPodLabels(modelName: string): Record<string, string> {
  return {
    [LLMD_INFERENCE_SERVING_LABEL]: 'true',
    [LLMD_INFERENCE_SERVING_LABEL_V2]: 'true',
    [LLMD_MODEL_LABEL]: gatewayObjectNames(modelName).modelLabel,
    [LLMD_ROLE_LABEL]: LLMD_ROLE_BOTH,
  };
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A copy of `obj` with `patch` applied at the nested `path` (created when missing). */
function withAt(obj: Json, path: readonly string[], patch: (current: Json) => Json): Json {
  const [head, ...rest] = path;
  const current = isObject(obj[head]) ? (obj[head] as Json) : {};
  return { ...obj, [head]: rest.length === 0 ? patch(current) : withAt(current, rest, patch) };
}

const addLabels = (labels: Record<string, string>) => (meta: Json): Json => ({ ...meta, labels: { ...((meta.labels as Record<string, string>) ?? {}), ...labels } });

/** The model-server Deployment with llm-d's labels on its pods and on itself (the selector is unchanged). */
function labelModelServer(deployment: Manifest, labels: Record<string, string>): Manifest {
  const labelled = withAt(deployment as unknown as Json, ['spec', 'template', 'metadata'], addLabels(labels));
  return withAt(labelled, ['metadata'], addLabels(labels)) as unknown as Manifest;
}

/**
 * What llm-d's scheduler (llm-d router v0.10.0) reads besides pods and pools, as in the router's own
 * Role. The operator must hold these rights itself to grant them (RBAC escalation prevention).
 */
const SCHEDULER_EXTRA_RULES = [{ apiGroups: [LLMD_API_GROUP], resources: ['inferenceobjectives', 'inferencemodelrewrites'], verbs: ['get', 'list', 'watch'] }];

/**
 * The shared endpoint picker objects, turned into llm-d's scheduler: read access to llm-d's kinds,
 * and the model's scheduler configuration, when it has one, in the picker's ConfigMap (as JSON,
 * which the picker reads as YAML) with the pods' configuration hash to match.
 */
function schedulerObjects(objects: readonly Manifest[], names: ReturnType<typeof llmdObjectNames>, model: LLMModelV1beta1): Manifest[] {
  const schedulerConfig = model.spec.inferencePool?.schedulerConfig;
  const config = schedulerConfig ? JSON.stringify(schedulerConfig) : undefined;
  return objects.map((obj) => {
    if (obj.kind === 'Role' && obj.metadata.name === names.eppServiceAccount) {
      return { ...obj, rules: [...((obj.rules as unknown[]) ?? []), ...SCHEDULER_EXTRA_RULES] };
    }
    if (!config) return obj;
    if (obj.kind === 'ConfigMap' && obj.metadata.name === names.epp) return endpointPickerConfigMap(model, config);
    if (obj.kind === 'Deployment' && obj.metadata.name === names.epp) {
      return withAt(obj as unknown as Json, ['spec', 'template', 'metadata'], (meta) => ({
        ...meta,
        annotations: { ...((meta.annotations as Record<string, string>) ?? {}), ...endpointPickerConfigAnnotations(config) },
      })) as unknown as Manifest;
    }
    return obj;
  });
}

function check(model: LLMModelV1beta1): TranslationError[] {
  const config = model.spec.inferencePool?.schedulerConfig;
  if (!config) return [];
  const missing = ['apiVersion', 'kind'].filter((key) => typeof config[key] !== 'string' || config[key] === '');
  if (missing.length === 0) return [];
  return [
    translationError(
      'spec.inferencePool.schedulerConfig',
      `has no ${missing.join(' and ')}; the scheduler reads it as a whole EndpointPickerConfig document, so set apiVersion to the version your scheduler image reads and kind to EndpointPickerConfig`,
    ),
  ];
}

/**
 * The InferenceObjective naming the model's InferencePool, with `spec.provider.overrides` merged in
 * (for example `spec.priority`; unset, the scheduler reads 0). The pool reference is the model's own
 * pool whatever the overrides say: pointing the objective elsewhere would only detach it.
 */
function inferenceObjective(model: LLMModelV1beta1, name: string, apiVersion: string): Manifest {
  // group and kind are what the CRD would default them to, so the object reads back as applied.
  const poolRef = { group: INFERENCE_API_GROUP, kind: 'InferencePool', name: gatewayObjectNames(model.metadata.name ?? '').inferencePool };
  const objective: Manifest = {
    apiVersion,
    kind: INFERENCE_OBJECTIVE_KIND,
    metadata: providerMetadata(model, name, 'inference-objective'),
    spec: { poolRef },
  };
  const merged = mergeOverrides(objective, model.spec.provider?.overrides);
  return { ...merged, spec: { ...(isObject(merged.spec) ? merged.spec : {}), poolRef } };
}

export function translateLLMD(model: LLMModelV1beta1, context: ProviderContext, served?: ServedVersions): ProviderTranslation {
  const name = model.metadata.name ?? '';
  const names = llmdObjectNames(name);
  const base = translateVLLM(model, context);
  const errors = [...base.errors, ...check(model)];
  if (errors.length > 0) return { ...base, objects: [], errors };

  const podLabels = llmdPodLabels(name);
  const objects = schedulerObjects(
    base.objects.map((obj) => (obj.kind === 'Deployment' && obj.metadata.name === names.deployment ? labelModelServer(obj, podLabels) : obj)),
    names,
    model,
  );
  const apiVersion = served?.[INFERENCE_OBJECTIVE_KIND] ?? `${LLMD_API_GROUP}/${INFERENCE_OBJECTIVE_VERSIONS[0]}`;
  objects.push(inferenceObjective(model, names.inferenceObjective, apiVersion));
  return { objects, workload: base.workload, servingPool: base.servingPool, podMonitor: base.podMonitor, errors: [] };
}

export const llmdProvider: LLMProvider = {
  name: 'llmd',
  defaultsTensorParallelism: true,
  resources: LLMD_RESOURCES,
  translate: translateLLMD,
  phase: (model, observed) => phaseFromPods(model.spec.serving?.replicas ?? LLMMODEL_DEFAULTS.replicas, observed),
};
