// Objects and labels every LLMModel provider shares: the labels and owner reference of what it
// creates, the GPU resource name, and the endpoint picker (EPP) the model's InferencePool consults,
// whichever workload serves the model.
import { LLMMODEL_DEFAULTS } from '../../api/llmmodel';
import { modelOwnerReferences } from '../gateway/labels';
import { SERVING_POD_MODEL_LABEL, SERVING_POD_ROLE_LABEL } from '../gateway/llmmodel';
import { boundedName, gatewayObjectNames, stableHash } from '../gateway/names';
import type { Manifest, ProviderContext } from './provider';
import type { LLMModelV1beta1 } from '../../api/v1beta1';
import { DEFAULT_EPP_IMAGE } from './default-images';

export const EPP_GRPC_PORT = 9002;
/** The picker's gRPC health service (liveness and readiness probes). */
export const EPP_HEALTH_PORT = 9003;
export { DEFAULT_EPP_IMAGE };

/** Labels of an object a provider creates for `model`, in the given role (`serving`, `endpoint-picker`, ...). */
export function providerLabels(model: LLMModelV1beta1, role: string): Record<string, string> {
  return {
    'app.kubernetes.io/component': role,
    'app.kubernetes.io/managed-by': 'nebari-llm-serving',
    'app.kubernetes.io/name': 'nebari-llm-serving',
    [SERVING_POD_MODEL_LABEL]: gatewayObjectNames(model.metadata.name ?? '').modelLabel,
    [SERVING_POD_ROLE_LABEL]: role,
  };
}

/** Name, namespace, labels and the owner reference to the model. */
export function providerMetadata(model: LLMModelV1beta1, name: string, role: string) {
  const owners = modelOwnerReferences(model);
  return { name, namespace: model.metadata.namespace ?? '', labels: providerLabels(model, role), ...(owners ? { ownerReferences: owners } : {}) };
}

/** Names of the endpoint picker's Deployment/Service and ServiceAccount/Role/RoleBinding. */
export function endpointPickerNames(modelName: string) {
  return { epp: gatewayObjectNames(modelName).endpointPicker, eppServiceAccount: boundedName(modelName, 'epp') };
}

/** The Prometheus Operator's PodMonitor, which `spec.serving.monitoring.enabled` creates. */
export const POD_MONITOR_API_VERSION = 'monitoring.coreos.com/v1';
export const POD_MONITOR_KIND = 'PodMonitor';

/**
 * The PodMonitor `name` scraping the serving pods `selector` picks at `/metrics` on their
 * container port `portName` (vLLM's OpenAI server exports its metrics on its API port). The port
 * is named, not numbered: a PodMonitor endpoint selects container ports by name.
 */
export function servingPodMonitor(model: LLMModelV1beta1, name: string, selector: Record<string, string>, portName: string): Manifest {
  return {
    apiVersion: POD_MONITOR_API_VERSION,
    kind: POD_MONITOR_KIND,
    metadata: providerMetadata(model, name, 'serving'),
    spec: { selector: { matchLabels: selector }, podMetricsEndpoints: [{ port: portName, path: '/metrics' }] },
  };
}

/** GPU resource name from spec.resources.gpu.type: `nvidia` → `nvidia.com/gpu`; a full name is kept. */
export function gpuResourceName(type: string | undefined): string {
  const t = type ?? LLMMODEL_DEFAULTS.gpuType;
  return t.includes('/') ? t : `${t}.com/gpu`;
}

/**
 * The endpoint picker's scheduling configuration when the model brings none: the plugins the
 * Inference Extension's own chart configures by default (v1.0.2). EPP v1.0.2 refuses to start
 * without a configuration (`--config-file` or `--config-text`); the picker adds its single
 * profile handler and max-score picker itself.
 */
export const DEFAULT_EPP_CONFIG = [
  'apiVersion: inference.networking.x-k8s.io/v1alpha1',
  'kind: EndpointPickerConfig',
  'plugins:',
  '- type: queue-scorer',
  '- type: kv-cache-utilization-scorer',
  '- type: prefix-cache-scorer',
  'schedulingProfiles:',
  '- name: default',
  '  plugins:',
  '  - pluginRef: queue-scorer',
  '  - pluginRef: kv-cache-utilization-scorer',
  '  - pluginRef: prefix-cache-scorer',
  '',
].join('\n');

/** Where the picker's configuration is mounted from its ConfigMap, and the file it reads. */
export const EPP_CONFIG_DIR = '/config';
export const EPP_CONFIG_KEY = 'config.yaml';
/**
 * Pod annotation with a hash of the configuration: the picker reads its file only at start, so a
 * changed configuration must roll the Deployment.
 */
export const EPP_CONFIG_HASH_ANNOTATION = 'llm.nebari.dev/endpoint-picker-config-hash';

/** The ConfigMap `<model>-epp` holding the picker's configuration document (YAML or JSON). */
export function endpointPickerConfigMap(model: LLMModelV1beta1, config: string): Manifest {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: providerMetadata(model, endpointPickerNames(model.metadata.name ?? '').epp, 'endpoint-picker'),
    data: { [EPP_CONFIG_KEY]: config },
  };
}

/** The pod annotations that tie the picker's pods to one configuration. */
export function endpointPickerConfigAnnotations(config: string): Record<string, string> {
  return { [EPP_CONFIG_HASH_ANNOTATION]: stableHash(config) };
}

/**
 * What the picker reads besides its pool (as the Inference Extension's chart grants it, v1.0.2):
 * pods, InferencePools and InferenceObjectives. Without the last one EPP v1.0.2 runs and reports
 * Ready but finds no candidate pods and answers every request 503.
 */
export const ENDPOINT_PICKER_RULES = [
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['inference.networking.k8s.io'], resources: ['inferencepools'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['inference.networking.x-k8s.io'], resources: ['inferenceobjectives'], verbs: ['get', 'list', 'watch'] },
];

/**
 * The EPP: ServiceAccount, Role (ENDPOINT_PICKER_RULES), its configuration in a ConfigMap
 * (`config`, by default DEFAULT_EPP_CONFIG), Deployment and gRPC Service. The gRPC health check
 * (port 9003) answers SERVING only once the picker has synced its pool, so Ready means serving.
 */
export function endpointPickerObjects(model: LLMModelV1beta1, context: ProviderContext, config: string = DEFAULT_EPP_CONFIG): Manifest[] {
  const name = model.metadata.name ?? '';
  const names = endpointPickerNames(name);
  const eppLabels = providerLabels(model, 'endpoint-picker');
  const selector = { [SERVING_POD_MODEL_LABEL]: eppLabels[SERVING_POD_MODEL_LABEL], [SERVING_POD_ROLE_LABEL]: 'endpoint-picker' };
  // The picker's own health service name (any name is checked the same way with one replica).
  const healthCheck = { grpc: { port: EPP_HEALTH_PORT, service: 'inference-extension' } };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: providerMetadata(model, names.eppServiceAccount, 'endpoint-picker') },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: providerMetadata(model, names.eppServiceAccount, 'endpoint-picker'),
      rules: ENDPOINT_PICKER_RULES,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: providerMetadata(model, names.eppServiceAccount, 'endpoint-picker'),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: names.eppServiceAccount },
      subjects: [{ kind: 'ServiceAccount', name: names.eppServiceAccount, namespace: model.metadata.namespace ?? '' }],
    },
    endpointPickerConfigMap(model, config),
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: providerMetadata(model, names.epp, 'endpoint-picker'),
      spec: {
        replicas: 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: eppLabels, annotations: endpointPickerConfigAnnotations(config) },
          spec: {
            serviceAccountName: names.eppServiceAccount,
            containers: [
              {
                name: 'epp',
                image: context.eppImage ?? DEFAULT_EPP_IMAGE,
                args: [
                  `--pool-name=${gatewayObjectNames(name).inferencePool}`,
                  `--pool-namespace=${model.metadata.namespace ?? ''}`,
                  `--grpc-port=${EPP_GRPC_PORT}`,
                  `--grpc-health-port=${EPP_HEALTH_PORT}`,
                  `--config-file=${EPP_CONFIG_DIR}/${EPP_CONFIG_KEY}`,
                ],
                ports: [
                  { name: 'grpc', containerPort: EPP_GRPC_PORT, protocol: 'TCP' },
                  { name: 'grpc-health', containerPort: EPP_HEALTH_PORT, protocol: 'TCP' },
                ],
                readinessProbe: { ...healthCheck, periodSeconds: 2 },
                livenessProbe: { ...healthCheck, initialDelaySeconds: 5, periodSeconds: 10 },
                volumeMounts: [{ name: 'config', mountPath: EPP_CONFIG_DIR, readOnly: true }],
              },
            ],
            volumes: [{ name: 'config', configMap: { name: names.epp } }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: providerMetadata(model, names.epp, 'endpoint-picker'),
      spec: { selector, ports: [{ name: 'grpc', port: EPP_GRPC_PORT, targetPort: EPP_GRPC_PORT, protocol: 'TCP', appProtocol: 'http2' }] },
    },
  ];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keys of a provider resource that `spec.provider.overrides` never sets (the CRD refuses them too). */
export const OPERATOR_OWNED_KEYS = ['apiVersion', 'kind', 'metadata', 'status'] as const;

/**
 * `spec.provider.overrides` merged into the provider resource the operator generated: objects are
 * merged key by key, anything else (scalars, lists) from the overrides replaces the generated
 * value; the operator-owned top-level keys are kept as generated.
 */
export function mergeOverrides(resource: Manifest, overrides: Record<string, unknown> | undefined): Manifest {
  if (!overrides) return resource;
  const merge = (base: unknown, over: unknown): unknown => {
    if (!isPlainObject(base) || !isPlainObject(over)) return over;
    const out: Record<string, unknown> = { ...base };
    for (const [key, value] of Object.entries(over)) out[key] = key in base ? merge(base[key], value) : value;
    return out;
  };
  const owned = new Set<string>(OPERATOR_OWNED_KEYS);
  const allowed = Object.fromEntries(Object.entries(overrides).filter(([key]) => !owned.has(key)));
  return merge(resource, allowed) as Manifest;
}

const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/**
 * A DNS-1035 label of at most `max` characters for a provider resource named after the model
 * (provider operators derive Service names from it): the model name itself when it already is
 * one; otherwise dots and other characters become dashes, a leading non-letter gets an `m-`
 * prefix, and the name is cut and ends in `-<hash of the model name>`, so that distinct models
 * keep distinct resources.
 */
export function dns1035Name(modelName: string, max: number): string {
  if (modelName.length <= max && DNS_1035_LABEL.test(modelName)) return modelName;
  const cleaned = modelName.toLowerCase().replace(/[^-a-z0-9]/g, '-');
  const tail = `-${stableHash(modelName)}`;
  const head = (/^[a-z]/.test(cleaned) ? cleaned : `m-${cleaned}`).slice(0, max - tail.length).replace(/-+$/, '');
  return `${head}${tail}`;
}

/** The PersistentVolumeClaim that caches a Hugging Face model's files (`spec.model.storage`). */
export function modelCacheClaim(model: LLMModelV1beta1, context: ProviderContext, name: string): Manifest {
  const storage = model.spec.model.storage;
  const storageClassName = storage?.storageClassName ?? context.storageClassName;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: providerMetadata(model, name, 'model-cache'),
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: storage?.size ?? context.defaultStorageSize ?? '100Gi' } },
      ...(storageClassName ? { storageClassName } : {}),
    },
  };
}
