import { LLM_PROVIDERS } from '../../../../src/api/llmmodel';
import type { LLMModelV1beta1 as LLMModel } from '../../../../src/api/v1beta1';
import { gpuResourceName, translateVLLM, vllmArgs, vllmObjectNames, vllmProvider } from '../../../../src/translate/providers/vllm';
import { llmProvider, phaseFromPods } from '../../../../src/translate/providers';

function model(spec: Partial<LLMModel['spec']> = {}, uid?: string): LLMModel {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name: 'qwen', namespace: 'ml', ...(uid ? { uid } : {}) },
    spec: {
      model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' },
      resources: { gpu: { count: 2, type: 'nvidia' } },
      access: { public: true },
      ...spec,
    },
  } as LLMModel;
}

const byKind = (objects: ReturnType<typeof translateVLLM>['objects'], kind: string, name?: string) =>
  objects.find((o) => o.kind === kind && (!name || o.metadata.name === name)) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('vLLM provider', () => {
  it('is the provider registered for vllm, and every provider name has one', () => {
    expect(llmProvider('vllm')).toBe(vllmProvider);
    expect(LLM_PROVIDERS.map((name) => llmProvider(name).name)).toEqual([...LLM_PROVIDERS]);
  });

  it('creates PVC, Deployment, Service and the endpoint picker, owned by the model', () => {
    const t = translateVLLM(model({}, 'uid-1'), {});
    expect(t.errors).toEqual([]);
    expect(t.objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'PersistentVolumeClaim/qwen-model-cache',
      'Deployment/qwen-vllm',
      'Service/qwen-vllm',
      'ServiceAccount/qwen-epp',
      'Role/qwen-epp',
      'RoleBinding/qwen-epp',
      'ConfigMap/qwen-epp',
      'Deployment/qwen-epp',
      'Service/qwen-epp',
    ]);
    for (const o of t.objects) expect(o.metadata.ownerReferences).toEqual([{ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', name: 'qwen', uid: 'uid-1', controller: true, blockOwnerDeletion: true }]);
    expect(t.workload).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'qwen-vllm' });
    expect(t.servingPool).toEqual({ selector: { 'llm.nebari.dev/model': 'qwen', 'llm.nebari.dev/role': 'serving' }, targetPort: 8000, endpointPickerPort: 9002 });
  });

  it('requests GPUs, tolerates the GPU taint, mounts /dev/shm and downloads the model first', () => {
    const t = translateVLLM(model(), { vllmImage: 'example/vllm:1' });
    const pod = byKind(t.objects, 'Deployment', 'qwen-vllm').spec.template.spec;
    const vllm = pod.containers[0];
    expect(vllm.image).toBe('example/vllm:1');
    expect(vllm.resources.limits['nvidia.com/gpu']).toBe('2');
    expect(pod.tolerations).toContainEqual({ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' });
    expect(pod.volumes).toContainEqual({ name: 'dshm', emptyDir: { medium: 'Memory' } });
    expect(pod.initContainers[0].env).toContainEqual({ name: 'MODEL_ID', value: 'Qwen/Qwen3-8B' });
    expect(byKind(t.objects, 'Deployment', 'qwen-vllm').spec.strategy).toEqual({ type: 'Recreate' });
    // The serving pods match the selector the InferencePool uses.
    expect(byKind(t.objects, 'Deployment', 'qwen-vllm').spec.template.metadata.labels).toMatchObject(t.servingPool.selector!);
  });

  it('builds vLLM arguments from parallelism and user arguments', () => {
    expect(vllmArgs(model({ serving: { dataParallelism: 2, engineArgs: ['--max-model-len=8192'] } }))).toEqual([
      '--model=/models/Qwen/Qwen3-8B',
      '--served-model-name=Qwen/Qwen3-8B',
      '--port=8000',
      '--tensor-parallel-size=2',
      '--data-parallel-size=2',
      '--max-model-len=8192',
    ]);
  });

  it('maps GPU types to resource names', () => {
    expect(gpuResourceName('nvidia')).toBe('nvidia.com/gpu');
    expect(gpuResourceName('amd.com/gpu')).toBe('amd.com/gpu');
  });

  it('reports a tensor parallelism larger than the GPU count as an error naming the fix', () => {
    const t = translateVLLM(model({ serving: { tensorParallelism: 4 } }), {});
    expect(t.objects).toEqual([]);
    expect(t.errors[0].message).toMatch(/^spec\.serving\.tensorParallelism: 4 is larger than spec\.resources\.gpu\.count \(2\)/);
  });

  it('with spec.serving.monitoring.enabled, a PodMonitor owned by the model scrapes /metrics on the engine\'s named port of exactly the serving pods; without it, only its name (to delete one left over)', () => {
    const on = translateVLLM(model({ serving: { monitoring: { enabled: true } } }, 'uid-1'), {});
    const deployment = byKind(on.objects, 'Deployment', 'qwen-vllm');
    const [container] = deployment.spec.template.spec.containers;
    expect(on.podMonitor).toEqual({
      name: 'qwen-vllm',
      object: {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'PodMonitor',
        metadata: expect.objectContaining({ name: 'qwen-vllm', namespace: 'ml', ownerReferences: [expect.objectContaining({ kind: 'LLMModel', uid: 'uid-1', controller: true })] }),
        spec: { selector: { matchLabels: on.servingPool.selector }, podMetricsEndpoints: [{ port: 'http', path: '/metrics' }] },
      },
    });
    // The port it names is the engine's, and its selector picks the serving pods, not the picker's.
    expect(container.ports).toEqual([{ name: 'http', containerPort: 8000, protocol: 'TCP' }]);
    expect(deployment.spec.template.metadata.labels).toMatchObject(on.servingPool.selector!);
    expect(byKind(on.objects, 'Deployment', 'qwen-epp').spec.template.metadata.labels).not.toMatchObject(on.servingPool.selector!);
    // Never among the provider's objects: a cluster without the Prometheus Operator still serves the model.
    expect(on.objects.map((o) => o.kind)).not.toContain('PodMonitor');
    expect(translateVLLM(model({ serving: { monitoring: { enabled: false } } }), {}).podMonitor).toEqual({ name: 'qwen-vllm' });
    expect(translateVLLM(model(), {}).podMonitor).toEqual({ name: 'qwen-vllm' });
  });

  it('skips the PVC for emptyDir storage', () => {
    const t = translateVLLM(model({ model: { name: 'x/y', source: 'huggingface', storage: { type: 'emptyDir' } } }), {});
    expect(byKind(t.objects, 'PersistentVolumeClaim')).toBeUndefined();
    expect(vllmObjectNames('qwen').pvc).toBe('qwen-model-cache');
  });
});

describe('phaseFromPods', () => {
  const pod = (p: Partial<{ ready: boolean; initializing: boolean; waitingReason: string }>) => ({ ready: false, initializing: false, ...p });
  it.each([
    ['Ready', 1, { workload: {}, pods: [pod({ ready: true })] }],
    ['Downloading', 1, { workload: {}, pods: [pod({ initializing: true })] }],
    ['Starting', 1, { workload: {}, pods: [pod({})] }],
    ['Pending', 1, { pods: [] }],
    ['Error', 1, { workload: {}, pods: [pod({ waitingReason: 'ImagePullBackOff' })] }],
    ['Degraded', 2, { workload: {}, pods: [pod({ ready: true }), pod({ waitingReason: 'CrashLoopBackOff' })] }],
    ['Ready', 0, { workload: {}, pods: [] }],
  ])('%s with %i desired', (phase, desired, observed) => {
    expect(phaseFromPods(desired as number, observed as Parameters<typeof phaseFromPods>[1]).phase).toBe(phase);
  });
});
