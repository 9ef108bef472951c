// The compatibility promise in schema terms: every field of the upstream Nebari pack's
// llm.nebari.dev/v1alpha1 LLMModel and PassthroughModel exists here with the same type, the same
// default and at least the same allowed values, and nothing upstream left optional is required.
// (test/integration/crds.test.ts proves the same against the API server with whole objects.)
import { LLMMODEL_DEFINITION, PASSTHROUGHMODEL_DEFINITION, rootSchema, typeName } from '../../../src/api';
import type { JsonSchema, KindDefinition } from '../../../src/api';
import { schemaAt, walk } from './schema-helpers';

interface UpstreamField {
  path: string;
  type: string;
  default?: unknown;
  enum?: string[];
}

// From the upstream CRDs (charts/nebari-llm-serving/crds/*.yaml of nebari-dev/llm-serving-pack).
const LLMMODEL_FIELDS: UpstreamField[] = [
  { path: 'spec.model.name', type: 'string' },
  { path: 'spec.model.source', type: 'string', enum: ['huggingface', 'oci'] },
  { path: 'spec.model.revision', type: 'string' },
  { path: 'spec.model.authSecretName', type: 'string' },
  { path: 'spec.model.image', type: 'string' },
  { path: 'spec.model.storage.type', type: 'string', default: 'pvc', enum: ['pvc', 'emptyDir'] },
  { path: 'spec.model.storage.size', type: 'string' },
  { path: 'spec.model.storage.storageClassName', type: 'string' },
  { path: 'spec.model.preload', type: 'boolean' },
  { path: 'spec.resources.gpu.count', type: 'integer' },
  { path: 'spec.resources.gpu.type', type: 'string', default: 'nvidia' },
  { path: 'spec.resources.requests', type: 'map[string]int-or-string' },
  { path: 'spec.resources.limits', type: 'map[string]int-or-string' },
  { path: 'spec.serving.image', type: 'string' },
  { path: 'spec.serving.command', type: '[]string' },
  { path: 'spec.serving.replicas', type: 'integer', default: 1 },
  { path: 'spec.serving.tensorParallelism', type: 'integer' },
  { path: 'spec.serving.dataParallelism', type: 'integer', default: 1 },
  { path: 'spec.serving.vllmArgs', type: '[]string' },
  { path: 'spec.serving.updateStrategy', type: 'string', default: 'Recreate', enum: ['Recreate', 'RollingUpdate'] },
  { path: 'spec.serving.monitoring.enabled', type: 'boolean' },
  { path: 'spec.access.public', type: 'boolean' },
  { path: 'spec.access.groups', type: '[]string' },
  { path: 'spec.endpoints.external.enabled', type: 'boolean', default: true },
  { path: 'spec.endpoints.external.subdomain', type: 'string' },
  { path: 'spec.endpoints.internal.enabled', type: 'boolean', default: true },
  { path: 'spec.endpoints.requestTimeout', type: 'string', default: '600s' },
  { path: 'spec.advanced.vllm.extraArgs', type: '[]string' },
  { path: 'spec.advanced.vllm.extraEnv', type: '[]object' },
  { path: 'spec.advanced.vllm.extraEnv[].name', type: 'string' },
  { path: 'spec.advanced.vllm.extraEnv[].value', type: 'string' },
  { path: 'spec.advanced.vllm.extraEnv[].valueFrom', type: 'object (free-form)' },
  { path: 'spec.advanced.vllm.tolerations', type: '[]object' },
  { path: 'spec.advanced.vllm.tolerations[].key', type: 'string' },
  { path: 'spec.advanced.vllm.tolerations[].operator', type: 'string' },
  { path: 'spec.advanced.vllm.tolerations[].value', type: 'string' },
  { path: 'spec.advanced.vllm.tolerations[].effect', type: 'string' },
  { path: 'spec.advanced.vllm.tolerations[].tolerationSeconds', type: 'integer' },
  { path: 'spec.advanced.vllm.nodeSelector', type: 'map[string]string' },
  { path: 'spec.advanced.vllm.affinity', type: 'object (free-form)' },
  { path: 'spec.advanced.inferencePool.schedulerConfig', type: 'object (free-form)' },
  { path: 'status.phase', type: 'string', enum: ['Pending', 'Downloading', 'Starting', 'Ready', 'Degraded', 'Error'] },
  { path: 'status.conditions', type: '[]object' },
  { path: 'status.observedGeneration', type: 'integer' },
  { path: 'status.modelSize', type: 'string' },
  { path: 'status.replicas.ready', type: 'integer' },
  { path: 'status.replicas.desired', type: 'integer' },
  { path: 'status.endpoints.external', type: 'string' },
  { path: 'status.endpoints.internal', type: 'string' },
];

const PASSTHROUGHMODEL_FIELDS: UpstreamField[] = [
  { path: 'spec.provider.hostname', type: 'string' },
  { path: 'spec.provider.port', type: 'integer', default: 443 },
  { path: 'spec.provider.schemaVersion', type: 'string', default: 'v1' },
  { path: 'spec.provider.credentialSecretName', type: 'string' },
  { path: 'spec.provider.backend.type', type: 'string', default: 'OpenAI', enum: ['OpenAI', 'Bedrock'] },
  { path: 'spec.provider.backend.bedrock.region', type: 'string' },
  { path: 'spec.provider.credential.type', type: 'string', enum: ['APIKey', 'WorkloadIdentity'] },
  { path: 'spec.models.catchAll', type: 'boolean' },
  { path: 'spec.models.declared', type: '[]string' },
  { path: 'spec.access.public', type: 'boolean' },
  { path: 'spec.access.groups', type: '[]string' },
  { path: 'spec.endpoints.external.enabled', type: 'boolean' },
  { path: 'spec.endpoints.internal.enabled', type: 'boolean' },
  { path: 'status.phase', type: 'string', enum: ['Ready', 'Error'] },
  { path: 'status.conditions', type: '[]object' },
  { path: 'status.observedGeneration', type: 'integer' },
  { path: 'status.endpoints.external', type: 'string' },
  { path: 'status.endpoints.internal', type: 'string' },
];

/** Where upstream requires a field (the only places we may require one). */
const UPSTREAM_REQUIRED: Record<string, Record<string, string[]>> = {
  LLMModel: {
    '': ['spec'],
    spec: ['access', 'model', 'resources'],
    'spec.model': ['name', 'source'],
    'spec.resources': ['gpu'],
    'spec.resources.gpu': ['count', 'type'],
    'status.replicas': ['desired', 'ready'],
    'status.conditions[]': ['lastTransitionTime', 'message', 'reason', 'status', 'type'],
    // Upstream embeds core/v1 EnvVar, whose name is required.
    'spec.advanced.vllm.extraEnv[]': ['name'],
  },
  PassthroughModel: {
    '': ['spec'],
    spec: ['access', 'provider'],
    'spec.provider.backend': ['type'],
    'spec.provider.backend.bedrock': ['region'],
    'spec.provider.credential': ['type'],
    'status.conditions[]': ['lastTransitionTime', 'message', 'reason', 'status', 'type'],
  },
};

describe.each<[string, KindDefinition, UpstreamField[]]>([
  ['LLMModel', LLMMODEL_DEFINITION, LLMMODEL_FIELDS],
  ['PassthroughModel', PASSTHROUGHMODEL_DEFINITION, PASSTHROUGHMODEL_FIELDS],
])('%s keeps every upstream field', (kind, def, fields) => {
  const root = rootSchema(def.schema);

  it.each(fields.map((f) => [f.path, f] as const))('%s: same type, default and allowed values', (path, upstream) => {
    const ours = schemaAt(root, path);
    expect(ours).toBeDefined();
    expect(typeName(ours as JsonSchema)).toBe(upstream.type);
    expect(ours?.default).toEqual(upstream.default);
    if (upstream.enum) expect(ours?.enum).toEqual(expect.arrayContaining(upstream.enum));
    else expect(ours?.enum).toBeUndefined();
  });

  it('requires nothing upstream left optional', () => {
    const extra: string[] = [];
    walk(root, (node, at) => {
      const allowed = new Set(UPSTREAM_REQUIRED[kind][at] ?? []);
      for (const name of (node.required as string[] | undefined) ?? []) if (!allowed.has(name)) extra.push(`${at || '<root>'}.${name}`);
    });
    // New optional objects may require fields inside themselves; only upstream paths matter here.
    const upstreamPaths = new Set(fields.map((f) => f.path));
    expect(extra.filter((p) => [...upstreamPaths].some((u) => u.startsWith(p.replace(/^<root>\./, ''))))).toEqual([]);
  });
});
