import { DEFAULT_EPP_IMAGE } from '../../../../src/translate/providers/serving-objects';
import type { LLMModelV1beta1 as LLMModel } from '../../../../src/api/v1beta1';
import {
  INFERENCE_OBJECTIVE_VERSIONS,
  llmdObjectNames,
  llmdPodLabels,
  llmdProvider,
  translateLLMD,
} from '../../../../src/translate/providers/llmd';
import { translateVLLM } from '../../../../src/translate/providers/vllm';
import type { ObservedWorkload } from '../../../../src/translate/providers/provider';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function model(spec: Partial<LLMModel['spec']> = {}, uid?: string): LLMModel {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name: 'qwen', namespace: 'ml', ...(uid ? { uid } : {}) },
    spec: {
      model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' },
      provider: { name: 'llmd' },
      resources: { gpu: { count: 2, type: 'nvidia' } },
      access: { public: true },
      ...spec,
    },
  } as LLMModel;
}

const find = (objects: readonly Obj[], kind: string, name?: string): Obj => {
  const found = objects.find((o) => o.kind === kind && (!name || o.metadata.name === name));
  if (!found) throw new Error(`no ${kind} ${name ?? ''}`);
  return found;
};
const schedulerConfig = {
  apiVersion: 'llm-d.ai/v1alpha1',
  kind: 'EndpointPickerConfig',
  plugins: [{ type: 'prefix-cache-scorer' }, { type: 'queue-scorer' }],
  schedulingProfiles: [{ name: 'default', plugins: [{ pluginRef: 'prefix-cache-scorer', weight: 3 }, { pluginRef: 'queue-scorer', weight: 2 }] }],
};

describe('llm-d provider', () => {
  it('declares the llm-d router InferenceObjective kind, in the versions the v0.10.0 CRD serves', () => {
    expect(llmdProvider.name).toBe('llmd');
    expect(llmdProvider.resources).toEqual([
      { group: 'llm-d.ai', kind: 'InferenceObjective', versions: ['v1alpha2'], installHint: expect.stringMatching(/^install the llm-d router CRDs \(/) },
    ]);
  });

  it('creates the vLLM model server, the scheduler and an InferenceObjective, all owned by the model', () => {
    const t = translateLLMD(model({}, 'uid-1'), {});
    expect(t.errors).toEqual([]);
    expect(t.objects.map((o) => `${o.apiVersion} ${o.kind}/${o.metadata.name}`)).toEqual([
      'v1 PersistentVolumeClaim/qwen-model-cache',
      'apps/v1 Deployment/qwen-vllm',
      'v1 Service/qwen-vllm',
      'v1 ServiceAccount/qwen-epp',
      'rbac.authorization.k8s.io/v1 Role/qwen-epp',
      'rbac.authorization.k8s.io/v1 RoleBinding/qwen-epp',
      'v1 ConfigMap/qwen-epp',
      'apps/v1 Deployment/qwen-epp',
      'v1 Service/qwen-epp',
      'llm-d.ai/v1alpha2 InferenceObjective/qwen',
    ]);
    for (const o of t.objects) {
      expect(o.metadata.namespace).toBe('ml');
      expect(o.metadata.ownerReferences).toEqual([{ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', name: 'qwen', uid: 'uid-1', controller: true, blockOwnerDeletion: true }]);
    }
    expect(t.workload).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'qwen-vllm' });
    expect(t.servingPool).toEqual({ selector: { 'llm.nebari.dev/model': 'qwen', 'llm.nebari.dev/role': 'serving' }, targetPort: 8000, endpointPickerPort: 9002 });
    expect(llmdObjectNames('qwen')).toMatchObject({ deployment: 'qwen-vllm', epp: 'qwen-epp', inferenceObjective: 'qwen' });
  });

  it("labels the model-server pods the way llm-d's scheduler and tooling expect, keeping the selector", () => {
    const t = translateLLMD(model(), {});
    const deployment = find(t.objects, 'Deployment', 'qwen-vllm');
    const expected = { 'llm-d.ai/inferenceServing': 'true', 'llm-d.ai/inference-serving': 'true', 'llm-d.ai/model': 'qwen', 'llm-d.ai/role': 'both' };
    expect(llmdPodLabels('qwen')).toEqual(expected);
    expect(deployment.spec.template.metadata.labels).toEqual({
      'app.kubernetes.io/component': 'serving',
      'app.kubernetes.io/managed-by': 'nebari-llm-serving',
      'app.kubernetes.io/name': 'nebari-llm-serving',
      'llm.nebari.dev/model': 'qwen',
      'llm.nebari.dev/role': 'serving',
      ...expected,
    });
    expect(deployment.metadata.labels).toMatchObject(expected);
    // The selector stays the one the InferencePool uses (a Deployment's selector is immutable).
    expect(deployment.spec.selector).toEqual({ matchLabels: t.servingPool.selector });
    expect(deployment.spec.template.metadata.labels).toMatchObject(t.servingPool.selector!);
    // The EPP pods are not serving pods.
    expect(find(t.objects, 'Deployment', 'qwen-epp').spec.template.metadata.labels['llm-d.ai/role']).toBeUndefined();
  });

  it('monitors the model-server pods with the same PodMonitor as the vLLM provider, and nothing of the scheduler', () => {
    const t = translateLLMD(model({ serving: { monitoring: { enabled: true } } }), {});
    expect(t.podMonitor).toEqual(translateVLLM(model({ serving: { monitoring: { enabled: true } } }), {}).podMonitor);
    const server = find(t.objects, 'Deployment', llmdObjectNames('qwen').deployment);
    expect(server.spec.template.metadata.labels).toMatchObject((t.podMonitor!.object!.spec as Obj).selector.matchLabels);
    expect(translateLLMD(model(), {}).podMonitor).toEqual({ name: 'qwen-vllm' });
  });

  it('runs the same vLLM server as the direct vLLM provider', () => {
    const m = model({ serving: { replicas: 3, engineArgs: ['--max-model-len=8192'] } });
    const llmd = find(translateLLMD(m, { vllmImage: 'example/vllm:1' }).objects, 'Deployment', 'qwen-vllm');
    const vllm = find(translateVLLM(m, { vllmImage: 'example/vllm:1' }).objects, 'Deployment', 'qwen-vllm');
    expect(llmd.spec.replicas).toBe(3);
    expect(llmd.spec.template.spec).toEqual(vllm.spec.template.spec);
    expect(llmd.spec.template.spec.containers[0].args).toContain('--max-model-len=8192');
    expect(llmd.spec.template.spec.containers[0].resources.limits['nvidia.com/gpu']).toBe('2');
  });

  it('points the InferenceObjective at the model InferencePool, in the served version', () => {
    const t = translateLLMD(model(), {}, { InferenceObjective: 'llm-d.ai/v1alpha2' });
    const objective = find(t.objects, 'InferenceObjective');
    expect(objective.apiVersion).toBe('llm-d.ai/v1alpha2');
    expect(objective.spec).toEqual({ poolRef: { group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'qwen' } });
    expect(objective.metadata.labels).toMatchObject({ 'llm.nebari.dev/model': 'qwen', 'app.kubernetes.io/managed-by': 'nebari-llm-serving' });
    // A version detection chose is written as is; without detection the first supported one.
    expect(find(translateLLMD(model(), {}, { InferenceObjective: 'llm-d.ai/v9' }).objects, 'InferenceObjective').apiVersion).toBe('llm-d.ai/v9');
    expect(find(translateLLMD(model(), {}).objects, 'InferenceObjective').apiVersion).toBe(`llm-d.ai/${INFERENCE_OBJECTIVE_VERSIONS[0]}`);
  });

  it('names the pool of a long model name as the gateway does', () => {
    const long = `m-${'x'.repeat(70)}`;
    const t = translateLLMD({ ...model(), metadata: { name: long, namespace: 'ml' } } as LLMModel, {});
    const objective = find(t.objects, 'InferenceObjective');
    expect(objective.metadata.name.length).toBeLessThanOrEqual(63);
    expect(objective.spec.poolRef.name).toBe(objective.metadata.name);
    expect(find(t.objects, 'Deployment', llmdObjectNames(long).deployment).spec.template.metadata.labels['llm-d.ai/model'].length).toBeLessThanOrEqual(63);
  });

  it('runs the endpoint picker the cluster sets (llm-d\'s scheduler image), else the Inference Extension picker', () => {
    const epp = (context: Parameters<typeof translateLLMD>[1]) => find(translateLLMD(model(), context).objects, 'Deployment', 'qwen-epp').spec.template.spec.containers[0];
    expect(epp({}).image).toBe(DEFAULT_EPP_IMAGE);
    expect(epp({ eppImage: 'example/llm-d-router-endpoint-picker:v0.10.0' }).image).toBe('example/llm-d-router-endpoint-picker:v0.10.0');
    expect(epp({}).args).toEqual(['--pool-name=qwen', '--pool-namespace=ml', '--grpc-port=9002', '--grpc-health-port=9003', '--config-file=/config/config.yaml']);
  });

  it("lets the scheduler read llm-d's kinds besides pods and pools", () => {
    const rules = find(translateLLMD(model(), {}).objects, 'Role', 'qwen-epp').rules;
    expect(rules).toContainEqual({ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] });
    expect(rules).toContainEqual({ apiGroups: ['inference.networking.k8s.io'], resources: ['inferencepools'], verbs: ['get', 'list', 'watch'] });
    expect(rules).toContainEqual({ apiGroups: ['inference.networking.x-k8s.io'], resources: ['inferenceobjectives'], verbs: ['get', 'list', 'watch'] });
    expect(rules).toContainEqual({ apiGroups: ['llm-d.ai'], resources: ['inferenceobjectives', 'inferencemodelrewrites'], verbs: ['get', 'list', 'watch'] });
    expect(rules).toHaveLength(4);
    for (const rule of rules) expect(rule.verbs).toEqual(['get', 'list', 'watch']);
  });

  it('passes spec.inferencePool.schedulerConfig to the scheduler unchanged, in its configuration file', () => {
    const t = translateLLMD(model({ inferencePool: { schedulerConfig } }), {});
    const container = find(t.objects, 'Deployment', 'qwen-epp').spec.template.spec.containers[0];
    // The file only: EPP refuses --config-text and --config-file together.
    expect(container.args.filter((a: string) => a.startsWith('--config-'))).toEqual(['--config-file=/config/config.yaml']);
    expect(JSON.parse(find(t.objects, 'ConfigMap', 'qwen-epp').data['config.yaml'])).toEqual(schedulerConfig);
    // A new configuration rolls the scheduler (it reads the file only at start).
    const annotation = (m: ReturnType<typeof model>) => find(translateLLMD(m, {}).objects, 'Deployment', 'qwen-epp').spec.template.metadata.annotations['llm.nebari.dev/endpoint-picker-config-hash'];
    expect(annotation(model({ inferencePool: { schedulerConfig } }))).not.toEqual(annotation(model()));
    expect(annotation(model({ inferencePool: { schedulerConfig } }))).toEqual(annotation(model({ inferencePool: { schedulerConfig: { ...schedulerConfig } } })));
  });

  it('refuses a scheduler configuration without apiVersion and kind, naming the field and the fix', () => {
    const t = translateLLMD(model({ inferencePool: { schedulerConfig: { plugins: [{ type: 'prefix-cache-scorer' }] } } }), {});
    expect(t.objects).toEqual([]);
    expect(t.errors).toEqual([
      {
        field: 'spec.inferencePool.schedulerConfig',
        message: expect.stringMatching(/^spec\.inferencePool\.schedulerConfig: has no apiVersion and kind; .*kind to EndpointPickerConfig$/),
      },
    ]);
    expect(t.workload.name).toBe('qwen-vllm');
  });

  it('reports the vLLM errors too (tensor parallelism above the GPU count)', () => {
    const t = translateLLMD(model({ serving: { tensorParallelism: 4 } }), {});
    expect(t.objects).toEqual([]);
    expect(t.errors[0].message).toMatch(/^spec\.serving\.tensorParallelism: 4 is larger than spec\.resources\.gpu\.count \(2\)/);
  });

  it('merges spec.provider.overrides into the InferenceObjective, ignoring owned keys and the pool reference', () => {
    const overrides = {
      spec: { priority: 10, poolRef: { name: 'another-pool' } },
      apiVersion: 'llm-d.ai/v1',
      kind: 'Other',
      metadata: { name: 'renamed', labels: { extra: 'x' } },
      status: { conditions: [] },
    };
    const t = translateLLMD(model({ provider: { name: 'llmd', overrides } }, 'uid-1'), {});
    const objective = find(t.objects, 'InferenceObjective');
    expect(objective.apiVersion).toBe('llm-d.ai/v1alpha2');
    expect(objective.kind).toBe('InferenceObjective');
    expect(objective.metadata.name).toBe('qwen');
    expect(objective.metadata.labels.extra).toBeUndefined();
    expect(objective.status).toBeUndefined();
    expect(objective.spec).toEqual({ priority: 10, poolRef: { group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'qwen' } });
    // Overrides never reach the model server.
    expect(find(t.objects, 'Deployment', 'qwen-vllm').spec.priority).toBeUndefined();
  });

  it('is pure: the same model gives the same objects, and the model is not changed', () => {
    const m = model({ inferencePool: { schedulerConfig }, provider: { name: 'llmd', overrides: { spec: { priority: 1 } } } });
    const before = JSON.stringify(m);
    expect(translateLLMD(m, {}, { InferenceObjective: 'llm-d.ai/v1alpha2' })).toEqual(translateLLMD(m, {}, { InferenceObjective: 'llm-d.ai/v1alpha2' }));
    expect(JSON.stringify(m)).toBe(before);
  });

  describe('phase', () => {
    const pod = (p: Partial<ObservedWorkload['pods'][number]>) => ({ ready: false, initializing: false, ...p });
    const phase = (spec: Partial<LLMModel['spec']>, observed: ObservedWorkload) => llmdProvider.phase(model(spec), observed);

    it('is Ready when every model-server replica is ready', () => {
      expect(phase({ serving: { replicas: 2 } }, { workload: {}, pods: [pod({ ready: true }), pod({ ready: true })] })).toEqual({
        phase: 'Ready',
        ready: 2,
        desired: 2,
        message: '2/2 serving replicas ready',
      });
    });

    it.each([
      ['Pending', { pods: [] }],
      ['Downloading', { workload: {}, pods: [pod({ initializing: true })] }],
      ['Starting', { workload: {}, pods: [pod({})] }],
      ['Error', { workload: {}, pods: [pod({ waitingReason: 'ImagePullBackOff' })] }],
    ])('is %s for one desired replica', (expected, observed) => {
      expect(phase({}, observed as ObservedWorkload).phase).toBe(expected);
    });

    it('is Degraded when some replicas serve and one is stuck', () => {
      const p = phase({ serving: { replicas: 2 } }, { workload: {}, pods: [pod({ ready: true }), pod({ waitingReason: 'CrashLoopBackOff' })] });
      expect(p).toMatchObject({ phase: 'Degraded', ready: 1, desired: 2, message: 'a serving pod is stuck: CrashLoopBackOff' });
    });

    it('is Ready at zero replicas', () => {
      expect(phase({ serving: { replicas: 0 } }, { workload: {}, pods: [] })).toMatchObject({ phase: 'Ready', desired: 0 });
    });
  });
});
