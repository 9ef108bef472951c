// The llm-d provider against a real kube-apiserver with the released CRDs (llm-d router v0.10.0,
// Inference Extension v1.0.2, this project's LLMModel): run-time detection picks the InferenceObjective
// version the CRD serves, every translated object is created and reads back without a field pruned,
// the objective's poolRef names the model's InferencePool, and the pods the model-server Deployment
// starts carry llm-d's labels and are the ones the pool selects. With spec.serving.monitoring.enabled,
// the PodMonitor (prometheus-operator v0.93.0's CRD) reads back unpruned too, and selects exactly
// those pods, on a container port of the name it scrapes.
import * as path from 'path';
import type { LLMModelV1beta1 as LLMModel } from '../../src/api/v1beta1';
import { ProviderVersions } from '../../src/operator/provider-versions';
import { resolveGatewayContext } from '../../src/translate/gateway/context';
import { modelInferencePool } from '../../src/translate/gateway/llmmodel';
import { llmdPodLabels, llmdProvider } from '../../src/translate/providers/llmd';
import type { ProviderTranslation } from '../../src/translate/providers/provider';
import { createNamespace, deleteObject, getObject, installCRDs, type ObjectRef, rest, testFieldManager, uniqueName, upstreamCrdDir } from '../support/cluster';
import { waitFor } from '../support/processes';
import { repoRoot } from '../support/tools';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ns = uniqueName('llmd');
const created: ObjectRef[] = [];

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Where the stored object differs from what was sent (fields the server added are fine). Two
 * serialisation rules are not pruning: a resource quantity sent as a number is stored as its
 * canonical string, and an empty list of a built-in kind is omitted.
 */
function differences(sent: unknown, stored: unknown, at = ''): string[] {
  if (Array.isArray(sent)) {
    if (sent.length === 0 && stored === undefined) return [];
    if (!Array.isArray(stored) || stored.length !== sent.length) return [`${at}: sent ${JSON.stringify(sent)}, stored ${JSON.stringify(stored)}`];
    return sent.flatMap((v, i) => differences(v, stored[i], `${at}[${i}]`));
  }
  if (isObject(sent)) {
    if (!isObject(stored)) return [`${at}: sent ${JSON.stringify(sent)}, stored ${JSON.stringify(stored)}`];
    return Object.entries(sent).flatMap(([k, v]) => differences(v, stored[k], at ? `${at}.${k}` : k));
  }
  if (typeof sent === 'number' && stored === String(sent)) return [];
  return sent === stored ? [] : [`${at}: sent ${JSON.stringify(sent)}, stored ${JSON.stringify(stored)}`];
}

/** Creates `obj` (a real create, not a dry run), remembers it for clean-up, and reads it back. */
async function createAndReadBack(obj: ObjectRef): Promise<Obj> {
  await rest().create(obj, { fieldManager: testFieldManager });
  created.push(obj);
  const stored = await getObject<Obj>(obj);
  expect(stored).toBeDefined();
  return stored!;
}

const schedulerConfig = {
  apiVersion: 'llm-d.ai/v1alpha1',
  kind: 'EndpointPickerConfig',
  plugins: [{ type: 'queue-scorer' }, { type: 'kv-cache-utilization-scorer' }, { type: 'prefix-cache-scorer' }],
  schedulingProfiles: [
    {
      name: 'default',
      plugins: [
        { pluginRef: 'queue-scorer', weight: 2 },
        { pluginRef: 'kv-cache-utilization-scorer', weight: 2 },
        { pluginRef: 'prefix-cache-scorer', weight: 3 },
      ],
    },
  ],
};

const llmModel = {
  apiVersion: 'llm.nebari.dev/v1beta1',
  kind: 'LLMModel',
  metadata: { name: 'qwen-llmd', namespace: ns },
  spec: {
    model: { name: 'Qwen/Qwen3-0.6B', source: 'huggingface', storage: { size: '5Gi' } },
    provider: { name: 'llmd', overrides: { spec: { priority: 7 } } },
    resources: { gpu: { count: 1, type: 'nvidia' }, requests: { cpu: '2', memory: '8Gi' } },
    serving: { replicas: 2, engineArgs: ['--max-model-len=4096'], env: [{ name: 'VLLM_LOGGING_LEVEL', value: 'INFO' }], monitoring: { enabled: true } },
    access: { public: true },
    inferencePool: { schedulerConfig },
  },
};

let model: LLMModel;
let translation: ProviderTranslation;

beforeAll(async () => {
  const up = upstreamCrdDir();
  await installCRDs([
    path.join(repoRoot, 'crds', 'llm.nebari.dev_llmmodels.yaml'),
    path.join(up, 'llm-d-router', 'v0.10.0'),
    path.join(up, 'gateway-api-inference-extension', 'v1.0.2'),
    path.join(up, 'prometheus-operator', 'v0.93.0', 'monitoring.coreos.com_podmonitors.yaml'),
  ]);
  await createNamespace(ns);
});

afterAll(async () => {
  for (const obj of created.reverse()) await deleteObject(obj);
  await deleteObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});

describe('the llm-d provider on a real API server', () => {
  it('detects the InferenceObjective version the llm-d router v0.10.0 CRD serves', async () => {
    const detection = await new ProviderVersions(rest()).detect(llmdProvider.resources!);
    expect(detection).toEqual({ served: { InferenceObjective: 'llm-d.ai/v1alpha2' }, missing: [] });
  });

  it('stores an LLMModel with the llmd provider, its scheduler configuration and overrides', async () => {
    const stored = await createAndReadBack(llmModel);
    expect(differences(llmModel, stored)).toEqual([]);
    model = stored as LLMModel;
    const detection = await new ProviderVersions(rest()).detect(llmdProvider.resources!);
    translation = llmdProvider.translate(model, {}, detection.served);
    expect(translation.errors).toEqual([]);
    expect(translation.objects.map((o) => o.kind)).toEqual([
      'PersistentVolumeClaim',
      'Deployment',
      'Service',
      'ServiceAccount',
      'Role',
      'RoleBinding',
      'ConfigMap',
      'Deployment',
      'Service',
      'InferenceObjective',
    ]);
  });

  it('creates every translated object and the InferencePool, and reads each back with nothing pruned', async () => {
    const { context, errors } = resolveGatewayContext({ baseDomain: 'example.com', servingPool: translation.servingPool });
    expect(errors).toEqual([]);
    const pool = modelInferencePool(model, context);
    expect(translation.podMonitor?.object?.kind).toBe('PodMonitor');
    for (const obj of [...translation.objects, pool, translation.podMonitor!.object!]) {
      const stored = await createAndReadBack(obj);
      expect({ object: `${obj.kind}/${obj.metadata.name}`, differences: differences(obj, stored) }).toEqual({ object: `${obj.kind}/${obj.metadata.name}`, differences: [] });
      expect(stored.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'LLMModel', name: 'qwen-llmd', uid: model.metadata.uid, controller: true })]);
    }
  });

  it('stores the InferenceObjective with the override and a poolRef naming the model InferencePool', async () => {
    const objective = await getObject<Obj>({ apiVersion: 'llm-d.ai/v1alpha2', kind: 'InferenceObjective', metadata: { name: 'qwen-llmd', namespace: ns } });
    expect(objective!.spec).toEqual({ priority: 7, poolRef: { group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'qwen-llmd' } });
    const pool = await getObject<Obj>({ apiVersion: 'inference.networking.k8s.io/v1', kind: 'InferencePool', metadata: { name: objective!.spec.poolRef.name, namespace: ns } });
    expect(pool!.spec.endpointPickerRef).toMatchObject({ kind: 'Service', name: 'qwen-llmd-epp', port: { number: 9002 } });
    expect(pool!.spec.targetPorts).toEqual([{ number: 8000 }]);
    // The scheduler Deployment reads the scheduler configuration the model carries, from its ConfigMap.
    const epp = await getObject<Obj>({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'qwen-llmd-epp', namespace: ns } });
    expect(epp!.spec.template.spec.containers[0].args).toContain('--config-file=/config/config.yaml');
    expect(epp!.spec.template.spec.volumes).toEqual([{ name: 'config', configMap: expect.objectContaining({ name: 'qwen-llmd-epp' }) }]);
    const config = await getObject<Obj>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'qwen-llmd-epp', namespace: ns } });
    expect(JSON.parse(config!.data['config.yaml'])).toEqual(schedulerConfig);
  });

  it('starts model-server pods that carry llm-d labels and are the pods the InferencePool selects', async () => {
    const pool = await getObject<Obj>({ apiVersion: 'inference.networking.k8s.io/v1', kind: 'InferencePool', metadata: { name: 'qwen-llmd', namespace: ns } });
    const selector = Object.entries(pool!.spec.selector.matchLabels as Record<string, string>).map(([k, v]) => `${k}=${v}`).join(',');
    let pods: Obj[] = [];
    await waitFor('two model-server pods', async () => {
      pods = (await rest().list('v1', 'Pod', { namespace: ns, labelSelector: selector })).items;
      return pods.length === 2;
    }, { timeoutMs: 60000 });
    for (const pod of pods) expect(pod.metadata.labels).toMatchObject(llmdPodLabels('qwen-llmd'));
    const byLlmdLabel = await rest().list('v1', 'Pod', { namespace: ns, labelSelector: 'llm-d.ai/inferenceServing=true,llm-d.ai/role=both' });
    expect(byLlmdLabel.items.map((p) => p.metadata.name).sort()).toEqual(pods.map((p) => p.metadata.name).sort());
    // The PodMonitor as stored selects the same pods, and each has a container port of the name it scrapes.
    const monitor = await getObject<Obj>({ apiVersion: 'monitoring.coreos.com/v1', kind: 'PodMonitor', metadata: { name: 'qwen-llmd-vllm', namespace: ns } });
    expect(monitor!.spec.podMetricsEndpoints).toEqual([{ port: 'http', path: '/metrics' }]);
    const monitorSelector = Object.entries(monitor!.spec.selector.matchLabels as Record<string, string>).map(([k, v]) => `${k}=${v}`).join(',');
    const monitored = (await rest().list('v1', 'Pod', { namespace: ns, labelSelector: monitorSelector })).items;
    expect(monitored.map((p) => p.metadata.name).sort()).toEqual(pods.map((p) => p.metadata.name).sort());
    for (const pod of monitored as Obj[]) {
      expect(pod.spec.containers.flatMap((c: Obj) => (c.ports ?? []).map((port: Obj) => `${c.name} ${port.name} ${port.containerPort}`))).toEqual(['vllm http 8000']);
    }
  });

  it('would notice a pruned field: the read-back check is not vacuous', async () => {
    const objective = translation.objects.find((o) => o.kind === 'InferenceObjective')!;
    const unknown = { ...objective, metadata: { ...objective.metadata, name: 'pruned-field' }, spec: { ...(objective.spec as Obj), notInTheSchema: true } };
    const stored = await createAndReadBack(unknown);
    expect(differences(unknown, stored)).toEqual(['spec.notInTheSchema: sent true, stored undefined']);
  });

  it('refuses, through the upstream schema, an override the InferenceObjective cannot hold', async () => {
    const bad = llmdProvider.translate({ ...model, spec: { ...model.spec, provider: { name: 'llmd', overrides: { spec: { priority: 'high' } } } } } as LLMModel, {}, { InferenceObjective: 'llm-d.ai/v1alpha2' });
    const objective = bad.objects.find((o) => o.kind === 'InferenceObjective')!;
    await expect(rest().create({ ...objective, metadata: { ...objective.metadata, name: 'bad-priority' } })).rejects.toMatchObject({
      code: 422,
      message: expect.stringContaining('spec.priority'),
    });
  });
});
