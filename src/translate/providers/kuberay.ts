// The KubeRay provider: one ray.io RayService that runs Ray Serve LLM (vLLM inside Ray) for the
// model, plus the endpoint picker (EPP) the InferencePool consults. KubeRay turns the RayService
// into a RayCluster (a CPU-only head pod and GPU worker pods) and submits the Serve application
// in `serveConfigV2`; the InferencePool targets the worker pods, whose Serve proxies answer the
// OpenAI API on port 8000.
//
// Things the shape below depends on (KubeRay v1.1.0 to v1.7.0):
// - KubeRay copies pod template labels onto the pods and lets them override its own, except
//   ray.io/node-type, ray.io/group and ray.io/cluster. Its head Service selects the head pod by
//   `app.kubernetes.io/name` and `app.kubernetes.io/created-by`, so the templates carry only the
//   llm.nebari.dev labels: the shared provider labels would take the head pod out of its Service.
// - Pods of a RayService's cluster carry `ray.io/serve`: always "true" on workers, whose
//   readiness probe includes the Serve proxy's health on the `serve` port; on the head it follows
//   the proxy's health. That label plus ours selects the ready-to-serve workers of any cluster of
//   this RayService (during a zero-downtime upgrade, old and new serve the same model).
// - A RayService does not pass a change of worker `replicas` on to its RayCluster (that field
//   belongs to the Ray autoscaler), and a change of min/max replicas rolls out a whole new cluster
//   on older releases. So the in-tree autoscaler is on, the worker bounds never change, and
//   spec.serving.replicas goes into the Serve config (an in-place update): Serve asks for that many
//   replicas and the autoscaler adds or removes GPU workers to fit them.
// - The head starts with 0 CPUs and 0 GPUs, so every Serve replica (and its proxy) lands on a worker.
// - v1.1.0's schema requires `rayStartParams` on every group; v1.7.0 limits names to 47 characters
//   of DNS-1035 label. Fields newer than v1.1.0 (upgradeStrategy, excludeHeadPodFromServeSvc, image
//   volumes) are not written, so one object is stored unchanged by both.
import { stringify } from 'yaml';
import { LLMMODEL_DEFAULTS, LLMMODEL_LIMITS } from '../../api/llmmodel';
import { tracingEngineSettings } from '../../api/tracing';
import { translationError, TranslationError } from '../gateway/errors';
import { SERVING_POD_MODEL_LABEL, SERVING_POD_ROLE, SERVING_POD_ROLE_LABEL, defaultServingPodSelector } from '../gateway/llmmodel';
import { gatewayObjectNames } from '../gateway/names';
import { FATAL_WAITING_REASONS } from './provider';
import type { LLMProvider, Manifest, ObservedWorkload, ProviderContext, ProviderPhase, ProviderResource, ProviderTranslation, ServedVersions } from './provider';
import { EPP_GRPC_PORT, dns1035Name, endpointPickerNames, endpointPickerObjects, gpuResourceName, mergeOverrides, providerMetadata } from './serving-objects';
import type { LLMModelV1beta1 } from '../../api/v1beta1';

export const RAYSERVICE_KIND = 'RayService';

export const KUBERAY_RESOURCE: ProviderResource = {
  group: 'ray.io',
  kind: RAYSERVICE_KIND,
  // v1alpha1 is still served by KubeRay but deprecated; v1 is served (and stored) since v1.0.
  versions: ['v1'],
  installHint:
    'install the KubeRay operator and its CRDs (the kuberay-operator Helm chart), v1.1.0 or later, which serves ray.io/v1 RayService',
};

/** Ray Serve's HTTP port: the `serve` port of every Ray pod, where the OpenAI API is answered. */
export const RAY_SERVE_PORT = 8000;
/** Ray version of the default image; written as rayClusterConfig.rayVersion. */
export const DEFAULT_RAY_VERSION = '2.52.0';
/** Ray with Ray Serve LLM and vLLM (CUDA 12.8). */
export const DEFAULT_RAY_IMAGE = `rayproject/ray-llm:${DEFAULT_RAY_VERSION}-py311-cu128`;
/** The Serve application that runs the model (the key of its status in the RayService). */
export const SERVE_APP_NAME = 'llm';
export const WORKER_GROUP_NAME = 'gpu-workers';
export const HEAD_ROLE = 'ray-head';
/** The longest RayService name KubeRay v1.7.0 accepts (its RayCluster adds `-xxxxx`). */
export const MAX_RAYSERVICE_NAME_LENGTH = 47;
/** CPU and memory of the head pod (Ray GCS, dashboard, Serve controller, autoscaler). */
export const HEAD_RESOURCES = { requests: { cpu: '1', memory: '4Gi' }, limits: { memory: '8Gi' } } as const;
/** The label KubeRay sets on Ray pods whose Serve proxy may receive traffic. */
export const RAY_SERVE_LABEL = 'ray.io/serve';

/**
 * Cluster-wide settings. `rayImage` is the cluster default for the head and worker image; it is
 * not (yet) a field of ProviderContext, so the operator passes it only once that field exists.
 */
export interface KubeRayProviderContext extends ProviderContext {
  /** Ray image with Ray Serve LLM. @default DEFAULT_RAY_IMAGE */
  readonly rayImage?: string;
}

/** vLLM arguments the provider sets itself; the error says where each comes from. */
const RESERVED_ENGINE_ARGS: Record<string, string> = {
  model: 'the model comes from spec.model.name',
  served_model_name: 'the served name is spec.model.name',
  host: 'Ray Serve owns the HTTP server',
  port: `Ray Serve owns the HTTP server (port ${RAY_SERVE_PORT})`,
  tensor_parallel_size: 'set spec.serving.tensorParallelism instead',
  data_parallel_size: 'data parallelism is not supported by this provider; raise spec.serving.replicas instead',
};

/**
 * The RayService name: the model name when it is a DNS-1035 label of at most 47 characters,
 * else a cut, cleaned name with a hash of the model name (distinct models stay distinct).
 */
export function rayServiceName(modelName: string): string {
  return dns1035Name(modelName, MAX_RAYSERVICE_NAME_LENGTH);
}

/** Names of the objects the KubeRay provider creates for `modelName`. */
export function kuberayObjectNames(modelName: string) {
  const rayService = rayServiceName(modelName);
  return { rayService, serveService: `${rayService}-serve-svc`, ...endpointPickerNames(modelName) };
}

/** Labels of the Ray pods: only ours, so KubeRay's own selectors keep matching (see top). */
function podLabels(model: LLMModelV1beta1, role: string): Record<string, string> {
  return { [SERVING_POD_MODEL_LABEL]: gatewayObjectNames(model.metadata.name ?? '').modelLabel, [SERVING_POD_ROLE_LABEL]: role };
}

/** The Ray version of an image tag such as `2.52.0-py311-cu128`; the default when the tag has none. */
export function rayVersionOf(image: string): string {
  const ref = image.split('@')[0];
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  const tag = colon > slash ? ref.slice(colon + 1) : '';
  return /^(\d+\.\d+\.\d+)/.exec(tag)?.[1] ?? DEFAULT_RAY_VERSION;
}

/** Whole CPUs of a quantity (`500m` → 1, `2` → 2); undefined when absent or not a plain CPU quantity. */
export function cpuCount(quantity: string | number | undefined): number | undefined {
  if (quantity === undefined) return undefined;
  const text = String(quantity);
  const milli = /^(\d+)m$/.exec(text);
  if (milli) return Math.max(1, Math.ceil(Number(milli[1]) / 1000));
  return /^\d+(\.\d+)?$/.test(text) ? Math.max(1, Math.ceil(Number(text))) : undefined;
}

function engineValue(text: string): unknown {
  if (/^-?\d+$/.test(text)) return Number(text);
  if (/^-?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+)$/.test(text)) return Number(text);
  if (/^(true|false)$/i.test(text)) return text.toLowerCase() === 'true';
  if (/^[{[]/.test(text)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

/**
 * vLLM command-line flags as Ray Serve LLM `engine_kwargs`: `--max-model-len=8192` and
 * `--max-model-len 8192` give `max_model_len: 8192`, a bare `--enforce-eager` gives `true`,
 * `--no-enable-prefix-caching` gives `enable_prefix_caching: false`; numbers, booleans and JSON
 * objects are typed. Flags the provider sets itself and words that are not flags are errors.
 */
export function engineKwargsFromArgs(args: readonly string[], field: string): { kwargs: Record<string, unknown>; errors: TranslationError[] } {
  const kwargs: Record<string, unknown> = {};
  const errors: TranslationError[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const flag = /^--([A-Za-z0-9][-A-Za-z0-9_.]*)(=([\s\S]*))?$/.exec(arg);
    if (!flag) {
      errors.push(translationError(field, `"${arg}" is not a --flag; the kuberay provider passes vLLM arguments to Ray Serve LLM as engine_kwargs, so write each one as --name=value`));
      continue;
    }
    let key = flag[1].replace(/-/g, '_');
    let value: unknown;
    if (flag[2] !== undefined) value = engineValue(flag[3]);
    else if (i + 1 < args.length && !args[i + 1].startsWith('--')) value = engineValue(args[++i]);
    else if (key.startsWith('no_')) [key, value] = [key.slice(3), false];
    else value = true;
    const reserved = RESERVED_ENGINE_ARGS[key];
    if (reserved) {
      errors.push(translationError(field, `--${flag[1]} cannot be set with the kuberay provider: ${reserved}`));
      continue;
    }
    kwargs[key] = value;
  }
  return { kwargs, errors };
}

function check(model: LLMModelV1beta1): TranslationError[] {
  const spec = model.spec;
  const errors: TranslationError[] = [];
  if (spec.model.source !== 'huggingface') {
    errors.push(
      translationError(
        'spec.model.source',
        `${spec.model.source} is not supported by the kuberay provider (Ray Serve LLM loads Hugging Face repositories, and KubeRay v1.1.0 cannot mount image volumes); set source to huggingface, or serve the image with spec.provider.name vllm`,
      ),
    );
  }
  if (spec.model.storage) {
    errors.push(
      translationError(
        'spec.model.storage',
        'is not supported by the kuberay provider: every Ray worker downloads the model into its own cache when its replica starts; remove spec.model.storage',
      ),
    );
  }
  if (spec.serving?.command) {
    errors.push(
      translationError('spec.serving.command', 'is not supported by the kuberay provider: KubeRay starts Ray in the containers and Ray Serve starts vLLM; remove it'),
    );
  }
  const gpus = spec.resources.gpu.count;
  if (gpus === 0) {
    errors.push(
      translationError('spec.resources.gpu.count', 'is 0, but the kuberay provider runs vLLM on GPU workers; request at least one GPU, or serve on CPU with spec.provider.name vllm'),
    );
  }
  const tp = spec.serving?.tensorParallelism;
  if (tp !== undefined && gpus > 0 && tp > gpus) {
    errors.push(translationError('spec.serving.tensorParallelism', `${tp} is larger than spec.resources.gpu.count (${gpus}); lower it or request more GPUs`));
  }
  const dp = spec.serving?.dataParallelism ?? LLMMODEL_DEFAULTS.dataParallelism;
  if (dp > 1) {
    errors.push(
      translationError('spec.serving.dataParallelism', `${dp} is not supported by the kuberay provider, which runs one engine per replica; set it to 1 and raise spec.serving.replicas instead`),
    );
  }
  return errors;
}

/** The Serve config (serveConfigV2) running Ray Serve LLM's OpenAI app for the model. */
function serveConfig(model: LLMModelV1beta1, engineKwargs: Record<string, unknown>): string {
  const spec = model.spec;
  const replicas = spec.serving?.replicas ?? LLMMODEL_DEFAULTS.replicas;
  const config = {
    applications: [
      {
        name: SERVE_APP_NAME,
        import_path: 'ray.serve.llm:build_openai_app',
        route_prefix: '/',
        args: {
          llm_configs: [
            {
              // model_id is the name clients send, as --served-model-name is for the vllm provider.
              model_loading_config: { model_id: spec.model.name, model_source: spec.model.name },
              engine_kwargs: engineKwargs,
              deployment_config: {
                // A fixed replica count (Serve cannot autoscale to a maximum of 0, so 0 keeps the
                // deployment at zero replicas and lets one start on a request sent to Ray directly).
                autoscaling_config:
                  replicas > 0 ? { min_replicas: replicas, initial_replicas: replicas, max_replicas: replicas } : { min_replicas: 0, initial_replicas: 0, max_replicas: 1 },
              },
            },
          ],
        },
      },
    ],
  };
  // YAML 1.1 quoting: KubeRay parses this with a YAML 1.1 parser, where `on` or `yes` are booleans.
  return stringify(config, { version: '1.1', lineWidth: 0 });
}

export function translateKubeRay(model: LLMModelV1beta1, context: KubeRayProviderContext, served?: ServedVersions): ProviderTranslation {
  const modelName = model.metadata.name ?? '';
  const names = kuberayObjectNames(modelName);
  const apiVersion = served?.[RAYSERVICE_KIND] ?? `${KUBERAY_RESOURCE.group}/${KUBERAY_RESOURCE.versions[0]}`;
  const workload = { apiVersion, kind: RAYSERVICE_KIND, name: names.rayService };
  const servingPool = { selector: { ...defaultServingPodSelector(modelName), [RAY_SERVE_LABEL]: 'true' }, targetPort: RAY_SERVE_PORT, endpointPickerPort: EPP_GRPC_PORT };

  const spec = model.spec;
  const gpus = spec.resources.gpu.count;
  // Tracing's engine argument goes the way of every other vLLM argument, before the user's own.
  const tracing = tracingEngineSettings(spec.observability?.tracing, modelName);
  const fromTracing = engineKwargsFromArgs(tracing.args, 'spec.observability.tracing');
  const fromServing = engineKwargsFromArgs(spec.serving?.engineArgs ?? [], 'spec.serving.engineArgs');
  const errors = [...check(model), ...fromTracing.errors, ...fromServing.errors];
  if (errors.length > 0) return { objects: [], workload, servingPool, errors };

  const engineKwargs = {
    tensor_parallel_size: spec.serving?.tensorParallelism ?? Math.max(gpus, 1),
    ...(spec.model.revision ? { revision: spec.model.revision } : {}),
    ...fromTracing.kwargs,
    ...fromServing.kwargs,
  };
  const image = spec.serving?.image ?? context.rayImage ?? DEFAULT_RAY_IMAGE;
  const gpuName = gpuResourceName(spec.resources.gpu.type);
  const hfToken = spec.model.authSecretName ? [{ name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: spec.model.authSecretName, key: 'HF_TOKEN' } } }] : [];
  const env = [...hfToken, ...tracing.env, ...(spec.serving?.env ?? [])];
  const userTolerations = spec.scheduling?.tolerations ?? [];
  const tolerations = [
    ...(userTolerations.some((t) => t.key === gpuName) ? [] : [{ key: gpuName, operator: 'Exists', effect: 'NoSchedule' }]),
    ...userTolerations,
  ];
  const replicas = spec.serving?.replicas ?? LLMMODEL_DEFAULTS.replicas;
  // The Ray autoscaler refuses a worker group whose CPU count it cannot tell; older Ray reads only
  // rayStartParams num-cpus or the CPU limit. Without a limit, num-cpus is the CPU request, else
  // one CPU per GPU plus two (the replica actor and the OpenAI ingress), which is also requested.
  const cpuLimit = spec.resources.limits?.cpu;
  const cpuRequest = spec.resources.requests?.cpu;
  const workerCpus = cpuLimit !== undefined ? undefined : (cpuCount(cpuRequest) ?? gpus + 2);
  const workerCpu = cpuLimit === undefined && cpuRequest === undefined ? { cpu: String(workerCpus) } : {};

  const rayService: Manifest = {
    apiVersion,
    kind: RAYSERVICE_KIND,
    metadata: providerMetadata(model, names.rayService, SERVING_POD_ROLE),
    spec: {
      serveConfigV2: serveConfig(model, engineKwargs),
      rayClusterConfig: {
        rayVersion: rayVersionOf(image),
        enableInTreeAutoscaling: true,
        headGroupSpec: {
          // No Serve replica on the head: 0 CPUs and GPUs for Ray tasks; the dashboard listens on
          // all addresses so KubeRay can submit the Serve config through the head Service.
          rayStartParams: { 'num-cpus': '0', 'num-gpus': '0', 'dashboard-host': '0.0.0.0' },
          template: {
            metadata: { labels: podLabels(model, HEAD_ROLE) },
            spec: {
              // No ports: KubeRay's defaults (GCS, dashboard, client, serve 8000, metrics) apply.
              containers: [
                {
                  name: 'ray-head',
                  image,
                  ...(env.length > 0 ? { env: [...env] } : {}),
                  resources: { requests: { ...HEAD_RESOURCES.requests }, limits: { ...HEAD_RESOURCES.limits } },
                },
              ],
            },
          },
        },
        workerGroupSpecs: [
          {
            groupName: WORKER_GROUP_NAME,
            replicas,
            minReplicas: 0,
            maxReplicas: LLMMODEL_LIMITS.maxReplicas,
            rayStartParams: { 'num-gpus': String(gpus), ...(workerCpus !== undefined ? { 'num-cpus': String(workerCpus) } : {}) },
            template: {
              metadata: { labels: podLabels(model, SERVING_POD_ROLE) },
              spec: {
                containers: [
                  {
                    name: 'ray-worker',
                    image,
                    ...(env.length > 0 ? { env: [...env] } : {}),
                    ports: [{ name: 'serve', containerPort: RAY_SERVE_PORT, protocol: 'TCP' }],
                    resources: {
                      requests: { ...workerCpu, ...(spec.resources.requests ?? {}), [gpuName]: String(gpus) },
                      limits: { ...(spec.resources.limits ?? {}), [gpuName]: String(gpus) },
                    },
                  },
                ],
                tolerations,
                ...(spec.scheduling?.nodeSelector ? { nodeSelector: spec.scheduling.nodeSelector } : {}),
                ...(spec.scheduling?.affinity ? { affinity: spec.scheduling.affinity } : {}),
              },
            },
          },
        ],
      },
    },
  };
  return {
    objects: [mergeOverrides(rayService, spec.provider?.overrides), ...endpointPickerObjects(model, context)],
    workload,
    servingPool,
    errors: [],
  };
}

// ---- phase ------------------------------------------------------------------------------------

interface AppState {
  readonly status?: string;
  readonly message?: string;
  readonly serveDeploymentStatuses?: Record<string, { status?: string; message?: string }>;
}
interface ClusterState {
  readonly rayClusterName?: string;
  readonly applicationStatuses?: Record<string, AppState>;
}
interface Condition {
  readonly type?: string;
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
}
interface RayServiceState {
  readonly serviceStatus?: string;
  readonly conditions?: Condition[];
  readonly activeServiceStatus?: ClusterState;
  readonly pendingServiceStatus?: ClusterState;
}

/** Ready-condition reasons (newer KubeRay) after which KubeRay stops trying. */
const FATAL_READY_REASONS = ['ValidationFailed', 'InitializingTimeout'];
/** serviceStatus of KubeRay v1.1/v1.2 that means the RayCluster could not be created. */
const FATAL_SERVICE_STATUSES = ['FailedToGetOrCreateRayCluster'];
const MAX_MESSAGE = 1000;

/** A message short enough for a condition: long Ray tracebacks keep their start and their end. */
function brief(text: string): string {
  const t = text.trim();
  return t.length <= MAX_MESSAGE ? t : `${t.slice(0, 250)} … ${t.slice(-(MAX_MESSAGE - 260))}`;
}

/** Applications in a given state, each as `application <name>: <message>` (KubeRay's/Ray's words). */
function appsIn(cluster: ClusterState | undefined, statuses: readonly string[]): string[] {
  const out: string[] = [];
  for (const [name, app] of Object.entries(cluster?.applicationStatuses ?? {})) {
    if (app.status && statuses.includes(app.status)) {
      const deployments = Object.entries(app.serveDeploymentStatuses ?? {}).filter(([, d]) => d.status === 'UNHEALTHY' || d.status === 'DEPLOY_FAILED');
      const detail = app.message || deployments.map(([d, s]) => `${d}: ${s.message || s.status}`).join('; ') || app.status;
      out.push(`Serve application ${name} is ${app.status}: ${detail}`);
    }
  }
  return out;
}

function appSummary(cluster: ClusterState | undefined): string {
  const apps = Object.entries(cluster?.applicationStatuses ?? {});
  return apps.length > 0 ? apps.map(([name, app]) => `Serve application ${name} is ${app.status ?? 'unknown'}`).join(', ') : '';
}

/** The LLMModel phase from the RayService status (KubeRay v1.1: serviceStatus; newer: conditions) and the serving pods. */
export function kuberayPhase(model: LLMModelV1beta1, observed: ObservedWorkload): ProviderPhase {
  const desired = model.spec.serving?.replicas ?? LLMMODEL_DEFAULTS.replicas;
  const ready = observed.pods.filter((p) => p.ready).length;
  const result = (phase: ProviderPhase['phase'], message: string): ProviderPhase => ({ phase, ready, desired, message: brief(message) });
  const failedPhase = ready > 0 ? 'Degraded' : 'Error';
  if (!observed.workload) return result('Pending', 'waiting for the RayService to be created');

  const status = (observed.workload.status ?? {}) as RayServiceState;
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  const readyCondition = conditions.find((c) => c.type === 'Ready');
  const active = status.activeServiceStatus?.rayClusterName ? status.activeServiceStatus : undefined;
  const pending = status.pendingServiceStatus?.rayClusterName ? status.pendingServiceStatus : undefined;
  // The cluster that serves, or, before the first one is promoted, the one being prepared.
  const current = active ?? pending;
  const upgrading = conditions.some((c) => c.type === 'UpgradeInProgress' && c.status === 'True') || (!!active && !!pending);
  const kubeRay = (c: Condition) => `KubeRay: ${c.reason ?? 'Ready'}${c.message ? `: ${c.message}` : ''}`;

  if (readyCondition?.status === 'False' && FATAL_READY_REASONS.includes(readyCondition.reason ?? '')) return result(failedPhase, kubeRay(readyCondition));
  if (status.serviceStatus && FATAL_SERVICE_STATUSES.includes(status.serviceStatus)) return result(failedPhase, `KubeRay: ${status.serviceStatus}`);
  const deployFailed = appsIn(current, ['DEPLOY_FAILED']);
  if (deployFailed.length > 0) return result(failedPhase, deployFailed.join('; '));
  const stuck = observed.pods.find((p) => p.waitingReason && FATAL_WAITING_REASONS.includes(p.waitingReason));
  if (stuck && ready < desired) return result(failedPhase, `a Ray worker pod is stuck: ${stuck.waitingReason}`);
  if (desired === 0) return result('Ready', 'scaled to zero replicas: no GPU worker is kept');
  const unhealthy = appsIn(current, ['UNHEALTHY']);
  if (unhealthy.length > 0) return result(failedPhase, unhealthy.join('; '));

  // KubeRay v1.1 has no conditions; it promotes a cluster to active once its applications run,
  // and may report a failed dashboard query in serviceStatus meanwhile.
  const activeApps = Object.values(active?.applicationStatuses ?? {});
  const serving = readyCondition
    ? readyCondition.status === 'True'
    : status.serviceStatus === 'Running' || (activeApps.length > 0 && activeApps.every((a) => a.status === 'RUNNING'));
  if (serving) {
    const counts = `${ready}/${desired} serving replicas ready`;
    if (upgrading) {
      const newFailed = appsIn(pending, ['DEPLOY_FAILED', 'UNHEALTHY']);
      if (newFailed.length > 0) return result('Degraded', `the update does not deploy on the new RayCluster, the previous one keeps serving (${counts}): ${newFailed.join('; ')}`);
    }
    const upgrade = upgrading ? `; KubeRay is preparing a new RayCluster${pending?.rayClusterName ? ` (${pending.rayClusterName})` : ''}` : '';
    if (ready >= desired) return result('Ready', `${counts}${upgrade}`);
    if (ready === 0) return result('Starting', `KubeRay reports the Serve application running; waiting for the Ray worker pods to become ready (${counts})${upgrade}`);
    return result('Degraded', `${counts}${upgrade}`);
  }
  if (readyCondition?.status === 'False' && readyCondition.reason === 'ZeroServeEndpoints') return result('Degraded', kubeRay(readyCondition));
  if (!readyCondition && !status.serviceStatus && !current) {
    return result('Pending', 'waiting for KubeRay to report the RayService status (is the KubeRay operator running?)');
  }
  const said = readyCondition ? kubeRay(readyCondition) : status.serviceStatus ? `KubeRay: ${status.serviceStatus}` : '';
  if (!current) return result('Pending', [said, 'the RayCluster is not created yet'].filter(Boolean).join('; '));
  return result('Starting', [said, appSummary(current), `${ready}/${desired} serving replicas ready`].filter(Boolean).join('; '));
}

export const kuberayProvider: LLMProvider = {
  name: 'kuberay',
  defaultsTensorParallelism: true,
  resources: [KUBERAY_RESOURCE],
  translate: translateKubeRay,
  phase: kuberayPhase,
};
