import type { LLMModelV1beta1 as LLMModel } from '../../../../src/api/v1beta1';
import {
  DYNAMO_FRONTEND,
  DYNAMO_WORKER,
  dynamoGraphName,
  dynamoObjectNames,
  dynamoPhase,
  dynamoProvider,
  dynamoWorkerArgs,
  translateDynamo,
} from '../../../../src/translate/providers/dynamo';
import type { ObservedWorkload } from '../../../../src/translate/providers/provider';
import { endpointPickerObjects } from '../../../../src/translate/providers/serving-objects';

const IMAGE = 'example/dynamo-vllm-runtime:1.0.0';

function model(spec: Partial<LLMModel['spec']> = {}, opts: { uid?: string; name?: string } = {}): LLMModel {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name: opts.name ?? 'llama', namespace: 'ml', ...(opts.uid ? { uid: opts.uid } : {}) },
    spec: {
      model: { name: 'meta-llama/Llama-3.3-70B-Instruct', source: 'huggingface', authSecretName: 'hf-token' },
      provider: { name: 'dynamo' },
      resources: { gpu: { count: 4, type: 'nvidia' } },
      serving: { image: IMAGE, tensorParallelism: 4, replicas: 2 },
      access: { public: true },
      ...spec,
    },
  } as LLMModel;
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const graphOf = (t: ReturnType<typeof translateDynamo>) => t.objects.find((o) => o.kind === 'DynamoGraphDeployment') as Json;

describe('Dynamo provider', () => {
  it('declares the DynamoGraphDeployment kind it writes, v1alpha1 only', () => {
    expect(dynamoProvider.name).toBe('dynamo');
    expect(dynamoProvider.resources).toEqual([
      { group: 'nvidia.com', kind: 'DynamoGraphDeployment', versions: ['v1alpha1'], installHint: expect.stringMatching(/Dynamo/) },
    ]);
  });

  it('creates the model-cache PVC, one DynamoGraphDeployment and the endpoint picker, all owned by the model', () => {
    const t = translateDynamo(model({}, { uid: 'uid-1' }), {}, { DynamoGraphDeployment: 'nvidia.com/v1alpha1' });
    expect(t.errors).toEqual([]);
    expect(t.objects.map((o) => `${o.apiVersion} ${o.kind}/${o.metadata.name}`)).toEqual([
      'v1 PersistentVolumeClaim/llama-model-cache',
      'nvidia.com/v1alpha1 DynamoGraphDeployment/llama',
      'v1 ServiceAccount/llama-epp',
      'rbac.authorization.k8s.io/v1 Role/llama-epp',
      'rbac.authorization.k8s.io/v1 RoleBinding/llama-epp',
      'v1 ConfigMap/llama-epp',
      'apps/v1 Deployment/llama-epp',
      'v1 Service/llama-epp',
    ]);
    for (const o of t.objects) {
      expect(o.metadata.namespace).toBe('ml');
      expect(o.metadata.ownerReferences).toEqual([{ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', name: 'llama', uid: 'uid-1', controller: true, blockOwnerDeletion: true }]);
    }
    expect(t.workload).toEqual({ apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment', name: 'llama' });
    expect(t.servingPool).toEqual({
      selector: { 'llm.nebari.dev/model': 'llama', 'llm.nebari.dev/role': 'serving', 'llm.nebari.dev/dynamo-component': 'frontend' },
      targetPort: 8000,
      endpointPickerPort: 9002,
    });
    expect(dynamoObjectNames('llama').frontendService).toBe('llama-frontend');
  });

  it('builds a frontend and an aggregated vLLM worker serving the Hugging Face model', () => {
    const t = translateDynamo(model(), {});
    const dgd = graphOf(t);
    expect(dgd.apiVersion).toBe('nvidia.com/v1alpha1');
    expect(dgd.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'nebari-llm-serving', 'llm.nebari.dev/model': 'llama' });
    expect(dgd.spec).toEqual({
      backendFramework: 'vllm',
      services: {
        Frontend: {
          componentType: 'frontend',
          replicas: 1,
          envFromSecret: 'hf-token',
          extraPodMetadata: { labels: t.servingPool.selector },
          extraPodSpec: { mainContainer: { image: IMAGE } },
        },
        VllmWorker: {
          componentType: 'worker',
          replicas: 2,
          envFromSecret: 'hf-token',
          envs: [{ name: 'HF_HOME', value: '/models' }],
          resources: { limits: { gpu: '4' } },
          extraPodMetadata: { labels: { 'llm.nebari.dev/model': 'llama', 'llm.nebari.dev/role': 'serving', 'llm.nebari.dev/dynamo-component': 'worker' } },
          extraPodSpec: {
            mainContainer: {
              image: IMAGE,
              command: ['python3', '-m', 'dynamo.vllm'],
              args: ['--model', 'meta-llama/Llama-3.3-70B-Instruct', '--tensor-parallel-size', '4'],
              volumeMounts: [{ name: 'model-cache', mountPath: '/models' }],
            },
            volumes: [{ name: 'model-cache', persistentVolumeClaim: { claimName: 'llama-model-cache' } }],
            tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
          },
        },
      },
    });
    // Only the frontend pods match the InferencePool's selector; the workers carry another component label.
    const workerLabels = dgd.spec.services[DYNAMO_WORKER].extraPodMetadata.labels;
    expect(Object.entries(t.servingPool.selector!).every(([k, v]) => workerLabels[k] === v)).toBe(false);
    expect(dgd.spec.services[DYNAMO_FRONTEND].extraPodMetadata.labels).toEqual(t.servingPool.selector);
  });

  it('writes the detected API version and defaults to v1alpha1', () => {
    expect(translateDynamo(model(), {}).workload.apiVersion).toBe('nvidia.com/v1alpha1');
    const t = translateDynamo(model(), {}, { DynamoGraphDeployment: 'nvidia.com/v1alpha1' });
    expect(graphOf(t).apiVersion).toBe('nvidia.com/v1alpha1');
  });

  it('maps revision, parallelism, engine arguments, env, resources and scheduling into the worker', () => {
    const m = model({
      model: { name: 'Qwen/Qwen3-8B', source: 'huggingface', revision: 'abc123', storage: { type: 'emptyDir' } },
      resources: { gpu: { count: 2, type: 'amd.com/gpu' }, requests: { cpu: 8, memory: '64Gi' }, limits: { memory: '96Gi', 'ephemeral-storage': '200Gi' } },
      serving: { image: IMAGE, dataParallelism: 2, engineArgs: ['--max-model-len=8192', '--enforce-eager'], command: ['/bin/serve'], env: [{ name: 'VLLM_LOGGING_LEVEL', value: 'DEBUG' }] },
      scheduling: { tolerations: [{ key: 'spot', operator: 'Exists' }], nodeSelector: { pool: 'gpu' }, affinity: { nodeAffinity: {} } },
    });
    expect(dynamoWorkerArgs(m)).toEqual(['--model', 'Qwen/Qwen3-8B', '--revision', 'abc123', '--tensor-parallel-size', '2', '--data-parallel-size', '2', '--max-model-len=8192', '--enforce-eager']);
    const t = translateDynamo(m, {});
    expect(t.objects.some((o) => o.kind === 'PersistentVolumeClaim')).toBe(false);
    const worker = graphOf(t).spec.services[DYNAMO_WORKER];
    expect(worker.replicas).toBe(1);
    expect(worker.envFromSecret).toBeUndefined();
    expect(worker.envs).toEqual([{ name: 'HF_HOME', value: '/models' }, { name: 'VLLM_LOGGING_LEVEL', value: 'DEBUG' }]);
    expect(worker.resources).toEqual({
      requests: { cpu: '8', memory: '64Gi' },
      limits: { memory: '96Gi', custom: { 'ephemeral-storage': '200Gi' }, gpu: '2', gpuType: 'amd.com/gpu' },
    });
    expect(worker.extraPodSpec.mainContainer.command).toEqual(['/bin/serve']);
    expect(worker.extraPodSpec.volumes).toEqual([{ name: 'model-cache', emptyDir: {} }]);
    expect(worker.extraPodSpec.tolerations).toEqual([{ key: 'amd.com/gpu', operator: 'Exists', effect: 'NoSchedule' }, { key: 'spot', operator: 'Exists' }]);
    expect(worker.extraPodSpec.nodeSelector).toEqual({ pool: 'gpu' });
    expect(worker.extraPodSpec.affinity).toEqual({ nodeAffinity: {} });
  });

  it('sizes the PVC from the model, then the chart defaults', () => {
    const pvc = (m: LLMModel, ctx = {}) => translateDynamo(m, ctx).objects.find((o) => o.kind === 'PersistentVolumeClaim') as Json;
    expect(pvc(model(), { storageClassName: 'fast', defaultStorageSize: '300Gi' }).spec).toEqual({
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '300Gi' } },
      storageClassName: 'fast',
    });
    const sized = model({ model: { name: 'x/y', source: 'huggingface', storage: { size: '500Gi', storageClassName: 'slow' } } });
    expect(pvc(sized, { storageClassName: 'fast' }).spec.resources.requests.storage).toBe('500Gi');
    expect(pvc(sized, { storageClassName: 'fast' }).spec.storageClassName).toBe('slow');
  });

  it('scales the frontend to zero with the workers', () => {
    const dgd = graphOf(translateDynamo(model({ serving: { image: IMAGE, replicas: 0 } }), {}));
    expect(dgd.spec.services[DYNAMO_FRONTEND].replicas).toBe(0);
    expect(dgd.spec.services[DYNAMO_WORKER].replicas).toBe(0);
  });

  it('merges spec.provider.overrides into the graph and ignores the keys the operator owns', () => {
    const overrides = {
      apiVersion: 'nvidia.com/v1beta1',
      kind: 'Deployment',
      metadata: { name: 'hijack', labels: { x: 'y' } },
      status: { state: 'successful' },
      spec: {
        envs: [{ name: 'DYN_LOG', value: 'debug' }],
        services: {
          Frontend: { replicas: 3 },
          VllmWorker: { extraPodSpec: { mainContainer: { args: ['--model', 'other/model'] } }, sharedMemory: { size: '16Gi' } },
        },
      },
    };
    const t = translateDynamo(model({ provider: { name: 'dynamo', overrides } }), {});
    const dgd = graphOf(t);
    expect(dgd.apiVersion).toBe('nvidia.com/v1alpha1');
    expect(dgd.kind).toBe('DynamoGraphDeployment');
    expect(dgd.metadata.name).toBe('llama');
    expect(dgd.metadata.labels.x).toBeUndefined();
    expect(dgd.status).toBeUndefined();
    expect(dgd.spec.envs).toEqual([{ name: 'DYN_LOG', value: 'debug' }]);
    expect(dgd.spec.backendFramework).toBe('vllm');
    expect(dgd.spec.services.Frontend).toMatchObject({ componentType: 'frontend', replicas: 3, extraPodSpec: { mainContainer: { image: IMAGE } } });
    // Lists are replaced, objects merged key by key.
    expect(dgd.spec.services.VllmWorker.extraPodSpec.mainContainer).toMatchObject({ image: IMAGE, command: ['python3', '-m', 'dynamo.vllm'], args: ['--model', 'other/model'] });
    expect(dgd.spec.services.VllmWorker.sharedMemory).toEqual({ size: '16Gi' });
    expect(dgd.spec.services.VllmWorker.resources.limits.gpu).toBe('4');
    // Only the graph takes the overrides; the endpoint picker is as without them.
    expect(t.objects.slice(2)).toEqual(endpointPickerObjects(model(), {}));
  });

  it('refuses a model source Dynamo cannot serve, naming the field and the fix', () => {
    const t = translateDynamo(model({ model: { name: 'my-model', source: 'oci', image: 'example/model-files:1' } }), {});
    expect(t.objects).toEqual([]);
    expect(t.errors).toHaveLength(1);
    expect(t.errors[0].field).toBe('spec.model.source');
    expect(t.errors[0].message).toMatch(/^spec\.model\.source: oci is not supported by the dynamo provider.*set spec\.model\.source to huggingface, or serve the OCI image with spec\.provider\.name vllm$/);
    // The workload and pool are still described, so status can name them.
    expect(t.workload.name).toBe('llama');
    expect(t.servingPool.targetPort).toBe(8000);
  });

  it('refuses CPU serving, a missing runtime image and a tensor parallelism above the GPU count', () => {
    const cpu = translateDynamo(model({ resources: { gpu: { count: 0, type: 'nvidia' } }, serving: { image: IMAGE } }), {});
    expect(cpu.errors.map((e) => e.field)).toEqual(['spec.resources.gpu.count']);
    expect(cpu.errors[0].message).toMatch(/request at least one GPU or use spec\.provider\.name vllm$/);
    const noImage = translateDynamo(model({ serving: { replicas: 1 } }), {});
    expect(noImage.errors.map((e) => e.field)).toEqual(['spec.serving.image']);
    expect(noImage.errors[0].message).toMatch(/^spec\.serving\.image: is required by the dynamo provider: set it to the Dynamo vLLM runtime image/);
    const tp = translateDynamo(model({ serving: { image: IMAGE, tensorParallelism: 8 } }), {});
    expect(tp.errors[0].message).toBe('spec.serving.tensorParallelism: 8 is larger than spec.resources.gpu.count (4); lower it or request more GPUs');
    expect(tp.objects).toEqual([]);
  });

  it('names the graph with a DNS label short enough for the Services Dynamo derives from it', () => {
    expect(dynamoGraphName('llama')).toBe('llama');
    const long = 'a-really-long-model-name-that-goes-on-and-on-and-on-for-a-while';
    const name = dynamoGraphName(long);
    expect(name).toHaveLength(40);
    expect(name).toMatch(/^a-really-long-model-name-that-g-[0-9a-f]{8}$/);
    expect(name).not.toBe(dynamoGraphName(`${long}-2`));
    expect(dynamoGraphName('qwen.3-8b')).toMatch(/^qwen-3-8b-[0-9a-f]{8}$/);
    expect(dynamoGraphName('7b-chat')).toMatch(/^m-7b-chat-[0-9a-f]{8}$/);
    expect(`${dynamoGraphName(long)}-vllmworker`.length).toBeLessThanOrEqual(63);
    expect(translateDynamo(model({}, { name: long }), {}).workload.name).toBe(name);
  });
});

describe('Dynamo phase', () => {
  const m = model();
  const condition = (status: 'True' | 'False', reason: string, message: string) => ({
    type: 'Ready',
    status,
    reason,
    message,
    lastTransitionTime: '2026-09-01T10:00:00Z',
  });
  const services = (workerReady: number, frontendReady = 1) => ({
    Frontend: { componentKind: 'Deployment', componentName: 'llama-frontend', componentNames: ['llama-frontend'], replicas: 1, updatedReplicas: 1, readyReplicas: frontendReady, availableReplicas: frontendReady },
    VllmWorker: { componentKind: 'Deployment', componentName: 'llama-vllmworker', componentNames: ['llama-vllmworker'], replicas: 2, updatedReplicas: 2, readyReplicas: workerReady, availableReplicas: workerReady },
  });
  const observed = (status: Json | undefined, pods: ObservedWorkload['pods'] = [], generation = 1): ObservedWorkload => ({
    workload: { apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment', metadata: { name: 'llama', namespace: 'ml', generation }, spec: {}, ...(status ? { status } : {}) },
    pods,
  });

  it('is Pending before the graph exists and while the Dynamo operator has not reported', () => {
    expect(dynamoPhase(m, { pods: [] })).toEqual({ phase: 'Pending', ready: 0, desired: 2, message: 'waiting for DynamoGraphDeployment llama to be created' });
    const silent = dynamoPhase(m, observed(undefined));
    expect(silent.phase).toBe('Pending');
    expect(silent.message).toMatch(/has not reported a status.*check that it is installed and running/);
  });

  it('is Pending while Dynamo initializes the graph', () => {
    const p = dynamoPhase(m, observed({ state: 'initializing', observedGeneration: 1 }));
    expect(p).toEqual({ phase: 'Pending', ready: 0, desired: 2, message: 'Dynamo is initializing DynamoGraphDeployment llama (Dynamo: no details yet)' });
  });

  it('is Starting while resources are not ready, carrying Dynamo\'s message', () => {
    const status = {
      state: 'pending',
      observedGeneration: 1,
      conditions: [condition('False', 'some_resources_are_not_ready', 'Resources not ready: llama-vllmworker: 0/2 replicas ready')],
      services: services(0, 0),
    };
    expect(dynamoPhase(m, observed(status))).toEqual({
      phase: 'Starting',
      ready: 0,
      desired: 2,
      message: '0/2 vLLM workers ready (Dynamo: Resources not ready: llama-vllmworker: 0/2 replicas ready)',
    });
  });

  it('is Degraded with some workers ready', () => {
    const status = { state: 'pending', observedGeneration: 1, conditions: [condition('False', 'some_resources_are_not_ready', 'Resources not ready: llama-vllmworker: 1/2 replicas ready')], services: services(1) };
    const p = dynamoPhase(m, observed(status));
    expect(p.phase).toBe('Degraded');
    expect(p.ready).toBe(1);
    expect(p.message).toContain('1/2 vLLM workers ready');
  });

  it('is Ready when Dynamo reports the graph successful', () => {
    const status = { state: 'successful', observedGeneration: 1, conditions: [condition('True', 'all_resources_are_ready', 'All resources are ready')], services: services(2) };
    expect(dynamoPhase(m, observed(status))).toEqual({ phase: 'Ready', ready: 2, desired: 2, message: '2/2 vLLM workers ready (Dynamo: All resources are ready)' });
  });

  it('is Error when Dynamo reports a failure, Degraded if workers still serve', () => {
    const failed = { state: 'failed', observedGeneration: 1, conditions: [condition('False', 'reconcile_failed', 'failed to create the DynamoComponentDeployment llama-vllmworker: admission webhook denied the request')], services: services(0, 0) };
    const p = dynamoPhase(m, observed(failed));
    expect(p.phase).toBe('Error');
    expect(p.message).toBe('DynamoGraphDeployment llama failed (Dynamo: failed to create the DynamoComponentDeployment llama-vllmworker: admission webhook denied the request)');
    expect(dynamoPhase(m, observed({ ...failed, services: services(1) })).phase).toBe('Degraded');
    expect(dynamoPhase(m, observed({ state: 'failed' })).message).toBe('DynamoGraphDeployment llama failed (Dynamo: no reason given)');
  });

  it('reports a frontend pod stuck on its image', () => {
    const status = { state: 'pending', observedGeneration: 1, conditions: [condition('False', 'some_resources_are_not_ready', 'Resources not ready')], services: services(0, 0) };
    const p = dynamoPhase(m, observed(status, [{ ready: false, initializing: false, waitingReason: 'ImagePullBackOff' }]));
    expect(p).toEqual({ phase: 'Error', ready: 0, desired: 2, message: 'a Dynamo frontend pod is stuck: ImagePullBackOff' });
  });

  it('is Starting while the status describes an older generation', () => {
    const status = { state: 'successful', observedGeneration: 1, conditions: [condition('True', 'all_resources_are_ready', 'All resources are ready')], services: services(2) };
    const p = dynamoPhase(m, observed(status, [], 2));
    expect(p.phase).toBe('Starting');
    expect(p.message).toMatch(/has not reconciled generation 2/);
  });

  it('is Ready when scaled to zero', () => {
    const zero = model({ serving: { image: IMAGE, replicas: 0 } });
    expect(dynamoPhase(zero, observed({ state: 'successful', observedGeneration: 1 }))).toEqual({ phase: 'Ready', ready: 0, desired: 0, message: 'scaled to zero replicas' });
  });

  it('is the provider\'s phase function', () => {
    expect(dynamoProvider.phase).toBe(dynamoPhase);
    expect(dynamoProvider.translate).toBe(translateDynamo);
  });
});
