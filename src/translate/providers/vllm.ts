// The direct vLLM provider: a PVC for the model files, a Deployment running the vLLM OpenAI
// server (GPU resources and tolerations, model download in an init container, /dev/shm), a
// Service on port 8000, and the endpoint picker (EPP) the InferencePool consults.
import { LLMMODEL_DEFAULTS } from '../../api/llmmodel';
import type { LLMModel } from '../../api/llmmodel';
import { translationError, TranslationError } from '../gateway/errors';
import { modelOwnerReferences } from '../gateway/labels';
import { defaultServingPodSelector, SERVING_POD_MODEL_LABEL, SERVING_POD_ROLE_LABEL } from '../gateway/llmmodel';
import { boundedName, gatewayObjectNames } from '../gateway/names';
import { LLMProvider, Manifest, ProviderContext, ProviderTranslation, phaseFromPods } from './provider';

export const VLLM_PORT = 8000;
export const EPP_GRPC_PORT = 9002;
export const DEFAULT_VLLM_IMAGE = 'vllm/vllm-openai:v0.11.0';
export const DEFAULT_DOWNLOADER_IMAGE = 'python:3.12-slim';
export const DEFAULT_EPP_IMAGE = 'registry.k8s.io/gateway-api-inference-extension/epp:v1.0.2';
export const MODEL_MOUNT = '/models';
const DEFAULT_COMMAND = ['python3', '-m', 'vllm.entrypoints.openai.api_server'];

/** Names of the objects the vLLM provider creates for `modelName`. */
export function vllmObjectNames(modelName: string) {
  return {
    deployment: boundedName(modelName, 'vllm'),
    service: boundedName(modelName, 'vllm'),
    pvc: boundedName(modelName, 'model-cache'),
    epp: gatewayObjectNames(modelName).endpointPicker,
    eppServiceAccount: boundedName(modelName, 'epp'),
  };
}

function labels(model: LLMModel, role: string): Record<string, string> {
  return {
    'app.kubernetes.io/component': role,
    'app.kubernetes.io/managed-by': 'nebari-llm-serving',
    'app.kubernetes.io/name': 'nebari-llm-serving',
    [SERVING_POD_MODEL_LABEL]: gatewayObjectNames(model.metadata.name ?? '').modelLabel,
    [SERVING_POD_ROLE_LABEL]: role,
  };
}

function metadata(model: LLMModel, name: string, role: string) {
  const owners = modelOwnerReferences(model);
  return { name, namespace: model.metadata.namespace ?? '', labels: labels(model, role), ...(owners ? { ownerReferences: owners } : {}) };
}

/** GPU resource name from spec.resources.gpu.type: `nvidia` → `nvidia.com/gpu`; a full name is kept. */
export function gpuResourceName(type: string | undefined): string {
  const t = type ?? LLMMODEL_DEFAULTS.gpuType;
  return t.includes('/') ? t : `${t}.com/gpu`;
}

/** vLLM arguments: model path, served name, port, parallelism, then the user's args. */
export function vllmArgs(model: LLMModel): string[] {
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
    ...(spec.serving?.vllmArgs ?? []),
    ...(spec.advanced?.vllm?.extraArgs ?? []),
  ];
}

function check(model: LLMModel): TranslationError[] {
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

export function translateVLLM(model: LLMModel, context: ProviderContext): ProviderTranslation {
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
    const storageClassName = spec.model.storage?.storageClassName ?? context.storageClassName;
    objects.push({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: metadata(model, names.pvc, 'model-cache'),
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: spec.model.storage?.size ?? context.defaultStorageSize ?? '100Gi' } },
        ...(storageClassName ? { storageClassName } : {}),
      },
    });
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
    requests: { ...(spec.resources.requests ?? {}), ...(gpus > 0 ? { [gpuName]: gpus } : {}) },
    limits: { ...(spec.resources.limits ?? {}), ...(gpus > 0 ? { [gpuName]: gpus } : {}) },
  };
  const tolerations = [...(gpus > 0 ? [{ key: gpuName, operator: 'Exists', effect: 'NoSchedule' }] : []), ...(spec.advanced?.vllm?.tolerations ?? [])];
  const replicas = spec.serving?.replicas ?? LLMMODEL_DEFAULTS.replicas;
  objects.push({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: metadata(model, names.deployment, 'serving'),
    spec: {
      replicas,
      selector: { matchLabels: selector },
      strategy: { type: spec.serving?.updateStrategy ?? LLMMODEL_DEFAULTS.updateStrategy },
      template: {
        metadata: { labels: labels(model, 'serving') },
        spec: {
          initContainers: download,
          containers: [
            {
              name: 'vllm',
              image: spec.serving?.image ?? context.vllmImage ?? DEFAULT_VLLM_IMAGE,
              command: spec.serving?.command ?? DEFAULT_COMMAND,
              args: vllmArgs(model),
              env: [...hfToken, ...(spec.advanced?.vllm?.extraEnv ?? [])],
              ports: [{ name: 'http', containerPort: VLLM_PORT, protocol: 'TCP' }],
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
          ...(spec.advanced?.vllm?.nodeSelector ? { nodeSelector: spec.advanced.vllm.nodeSelector } : {}),
          ...(spec.advanced?.vllm?.affinity ? { affinity: spec.advanced.vllm.affinity } : {}),
        },
      },
    },
  });
  objects.push({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(model, names.service, 'serving'),
    spec: { selector, ports: [{ name: 'http', port: VLLM_PORT, targetPort: VLLM_PORT, protocol: 'TCP' }] },
  });
  objects.push(...endpointPickerObjects(model, context));
  return { objects, workload, servingPool, errors: [] };
}

/** The EPP: ServiceAccount, Role to read pods and InferencePools, Deployment and gRPC Service. */
function endpointPickerObjects(model: LLMModel, context: ProviderContext): Manifest[] {
  const name = model.metadata.name ?? '';
  const names = vllmObjectNames(name);
  const eppLabels = labels(model, 'endpoint-picker');
  const selector = { [SERVING_POD_MODEL_LABEL]: eppLabels[SERVING_POD_MODEL_LABEL], [SERVING_POD_ROLE_LABEL]: 'endpoint-picker' };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: metadata(model, names.eppServiceAccount, 'endpoint-picker') },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: metadata(model, names.eppServiceAccount, 'endpoint-picker'),
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['inference.networking.k8s.io'], resources: ['inferencepools'], verbs: ['get', 'list', 'watch'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: metadata(model, names.eppServiceAccount, 'endpoint-picker'),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: names.eppServiceAccount },
      subjects: [{ kind: 'ServiceAccount', name: names.eppServiceAccount, namespace: model.metadata.namespace ?? '' }],
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: metadata(model, names.epp, 'endpoint-picker'),
      spec: {
        replicas: 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: eppLabels },
          spec: {
            serviceAccountName: names.eppServiceAccount,
            containers: [
              {
                name: 'epp',
                image: context.eppImage ?? DEFAULT_EPP_IMAGE,
                args: [`--pool-name=${gatewayObjectNames(name).inferencePool}`, `--pool-namespace=${model.metadata.namespace ?? ''}`, `--grpc-port=${EPP_GRPC_PORT}`],
                ports: [{ name: 'grpc', containerPort: EPP_GRPC_PORT, protocol: 'TCP' }],
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: metadata(model, names.epp, 'endpoint-picker'),
      spec: { selector, ports: [{ name: 'grpc', port: EPP_GRPC_PORT, targetPort: EPP_GRPC_PORT, protocol: 'TCP', appProtocol: 'http2' }] },
    },
  ];
}

export const vllmProvider: LLMProvider = {
  name: 'vllm',
  translate: translateVLLM,
  phase: (model, observed) => phaseFromPods(model.spec.serving?.replicas ?? LLMMODEL_DEFAULTS.replicas, observed),
};
