// The direct vLLM provider: a PVC for the model files, a Deployment running the vLLM OpenAI
// server (GPU resources and tolerations, model download in an init container, /dev/shm), a
// Service on port 8000, the endpoint picker (EPP) the InferencePool consults and, with
// spec.serving.monitoring.enabled, a PodMonitor scraping the engine's metrics.
import { LLMMODEL_DEFAULTS } from '../../api/llmmodel';
import { tracingEngineSettings } from '../../api/tracing';
import { translationError, TranslationError } from '../gateway/errors';
import { defaultServingPodSelector } from '../gateway/llmmodel';
import { boundedName } from '../gateway/names';
import { LLMProvider, Manifest, ProviderContext, ProviderTranslation, phaseFromPods } from './provider';
import { EPP_GRPC_PORT, modelCacheClaim, endpointPickerNames, endpointPickerObjects, gpuResourceName, providerLabels, providerMetadata, servingPodMonitor } from './serving-objects';
import type { LLMModelV1beta1 } from '../../api/v1beta1';
import { DEFAULT_DOWNLOADER_IMAGE, DEFAULT_VLLM_IMAGE } from './default-images';

export { EPP_GRPC_PORT, DEFAULT_EPP_IMAGE, gpuResourceName } from './serving-objects';

export const VLLM_PORT = 8000;
/** The name of the engine's container port: the PodMonitor scrapes it by this name. */
export const VLLM_PORT_NAME = 'http';
export { DEFAULT_DOWNLOADER_IMAGE, DEFAULT_VLLM_IMAGE };
export const MODEL_MOUNT = '/models';
const DEFAULT_COMMAND = ['python3', '-m', 'vllm.entrypoints.openai.api_server'];

/** Names of the objects the vLLM provider creates for `modelName`. */
export function vllmObjectNames(modelName: string) {
  return {
    deployment: boundedName(modelName, 'vllm'),
    service: boundedName(modelName, 'vllm'),
    pvc: boundedName(modelName, 'model-cache'),
    podMonitor: boundedName(modelName, 'vllm'),
    ...endpointPickerNames(modelName),
  };
}

/** vLLM arguments: model path, served name, port, parallelism, tracing, then the user's args. */
export function vllmArgs(model: LLMModelV1beta1): string[] {
  const spec = model.spec;
  const gpus = spec.resources.gpu.count;
  const tp = spec.serving?.tensorParallelism ?? Math.max(gpus, 1);
  const dp = spec.serving?.dataParallelism ?? LLMMODEL_DEFAULTS.dataParallelism;
  const modelPath = spec.model.source === 'oci' ? MODEL_MOUNT : `${MODEL_MOUNT}/${spec.model.name}`;
  return [
    `--model=${modelPath}`,
    `--served-model-name=${spec.model.name}`,
    `--port=${VLLM_PORT}`,
    `--tensor-parallel-size=${tp}`,
    ...(dp > 1 ? [`--data-parallel-size=${dp}`] : []),
    ...tracingEngineSettings(spec.observability?.tracing, model.metadata.name ?? '').args,
    ...(spec.serving?.engineArgs ?? []),
  ];
}

function check(model: LLMModelV1beta1): TranslationError[] {
  const errors: TranslationError[] = [];
  const spec = model.spec;
  const tp = spec.serving?.tensorParallelism;
  if (tp !== undefined && spec.resources.gpu.count > 0 && tp > spec.resources.gpu.count) {
    errors.push(translationError('spec.serving.tensorParallelism', `${tp} is larger than spec.resources.gpu.count (${spec.resources.gpu.count}); lower it or request more GPUs`));
  }
  if (spec.model.source === 'oci' && !spec.model.image) {
    errors.push(translationError('spec.model.image', 'is required when spec.model.source is oci; set the image that holds the model files'));
  }
  return errors;
}

export function translateVLLM(model: LLMModelV1beta1, context: ProviderContext): ProviderTranslation {
  const name = model.metadata.name ?? '';
  const names = vllmObjectNames(name);
  const selector = defaultServingPodSelector(name);
  const servingPool = { selector, targetPort: VLLM_PORT, endpointPickerPort: EPP_GRPC_PORT };
  const workload = { apiVersion: 'apps/v1', kind: 'Deployment', name: names.deployment };
  const errors = check(model);
  if (errors.length > 0) return { objects: [], workload, servingPool, errors };

  const spec = model.spec;
  const storageType = spec.model.storage?.type ?? LLMMODEL_DEFAULTS.storageType;
  const gpus = spec.resources.gpu.count;
  const gpuName = gpuResourceName(spec.resources.gpu.type);
  const objects: Manifest[] = [];

  if (storageType === 'pvc' && spec.model.source === 'huggingface') {
    objects.push(modelCacheClaim(model, context, names.pvc));
  }

  const modelVolume =
    spec.model.source === 'oci'
      ? { name: 'model', image: { reference: spec.model.image, pullPolicy: 'IfNotPresent' } }
      : storageType === 'pvc'
        ? { name: 'model', persistentVolumeClaim: { claimName: names.pvc } }
        : { name: 'model', emptyDir: {} };
  const hfToken = spec.model.authSecretName ? [{ name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: spec.model.authSecretName, key: 'HF_TOKEN' } } }] : [];
  // Hugging Face models are always downloaded before vLLM starts (re-used from the PVC when present).
  const download =
    spec.model.source === 'huggingface'
      ? [
          {
            name: 'model-download',
            image: context.downloaderImage ?? DEFAULT_DOWNLOADER_IMAGE,
            command: ['sh', '-c', 'pip install --quiet "huggingface_hub[cli]" && huggingface-cli download "$MODEL_ID" ${MODEL_REVISION:+--revision "$MODEL_REVISION"} --local-dir "$MODEL_DIR"'],
            env: [
              { name: 'MODEL_ID', value: spec.model.name },
              { name: 'MODEL_DIR', value: `${MODEL_MOUNT}/${spec.model.name}` },
              ...(spec.model.revision ? [{ name: 'MODEL_REVISION', value: spec.model.revision }] : []),
              ...hfToken,
            ],
            volumeMounts: [{ name: 'model', mountPath: MODEL_MOUNT }],
          },
        ]
      : [];
  const resources = {
    // Quantities as the API server stores them (a string), so the stored object equals the body.
    requests: { ...(spec.resources.requests ?? {}), ...(gpus > 0 ? { [gpuName]: String(gpus) } : {}) },
    limits: { ...(spec.resources.limits ?? {}), ...(gpus > 0 ? { [gpuName]: String(gpus) } : {}) },
  };
  const tolerations = [...(gpus > 0 ? [{ key: gpuName, operator: 'Exists', effect: 'NoSchedule' }] : []), ...(spec.scheduling?.tolerations ?? [])];
  const replicas = spec.serving?.replicas ?? LLMMODEL_DEFAULTS.replicas;
  objects.push({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: providerMetadata(model, names.deployment, 'serving'),
    spec: {
      replicas,
      selector: { matchLabels: selector },
      strategy: { type: spec.serving?.updateStrategy ?? LLMMODEL_DEFAULTS.updateStrategy },
      template: {
        metadata: { labels: providerLabels(model, 'serving') },
        spec: {
          initContainers: download,
          containers: [
            {
              name: 'vllm',
              image: spec.serving?.image ?? context.vllmImage ?? DEFAULT_VLLM_IMAGE,
              command: spec.serving?.command ?? DEFAULT_COMMAND,
              args: vllmArgs(model),
              env: [...hfToken, ...tracingEngineSettings(spec.observability?.tracing, model.metadata.name ?? '').env, ...(spec.serving?.env ?? [])],
              ports: [{ name: VLLM_PORT_NAME, containerPort: VLLM_PORT, protocol: 'TCP' }],
              readinessProbe: { httpGet: { path: '/health', port: VLLM_PORT }, periodSeconds: 10, failureThreshold: 3 },
              startupProbe: { httpGet: { path: '/health', port: VLLM_PORT }, periodSeconds: 10, failureThreshold: 180 },
              resources,
              volumeMounts: [
                { name: 'model', mountPath: MODEL_MOUNT },
                { name: 'dshm', mountPath: '/dev/shm' },
              ],
            },
          ],
          volumes: [modelVolume, { name: 'dshm', emptyDir: { medium: 'Memory' } }],
          tolerations,
          ...(spec.scheduling?.nodeSelector ? { nodeSelector: spec.scheduling.nodeSelector } : {}),
          ...(spec.scheduling?.affinity ? { affinity: spec.scheduling.affinity } : {}),
        },
      },
    },
  });
  objects.push({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: providerMetadata(model, names.service, 'serving'),
    spec: { selector, ports: [{ name: 'http', port: VLLM_PORT, targetPort: VLLM_PORT, protocol: 'TCP' }] },
  });
  objects.push(...endpointPickerObjects(model, context));
  const podMonitor = spec.serving?.monitoring?.enabled ? servingPodMonitor(model, names.podMonitor, selector, VLLM_PORT_NAME) : undefined;
  return { objects, workload, servingPool, podMonitor: { name: names.podMonitor, ...(podMonitor ? { object: podMonitor } : {}) }, errors: [] };
}

export const vllmProvider: LLMProvider = {
  name: 'vllm',
  defaultsTensorParallelism: true,
  translate: translateVLLM,
  phase: (model, observed) => phaseFromPods(model.spec.serving?.replicas ?? LLMMODEL_DEFAULTS.replicas, observed),
};
