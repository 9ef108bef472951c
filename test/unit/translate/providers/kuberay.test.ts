import { parse } from 'yaml';
import type { LLMModelV1beta1 as LLMModel } from '../../../../src/api/v1beta1';
import {
  DEFAULT_RAY_IMAGE,
  cpuCount,
  engineKwargsFromArgs,
  kuberayObjectNames,
  kuberayPhase,
  kuberayProvider,
  rayServiceName,
  rayVersionOf,
  translateKubeRay,
} from '../../../../src/translate/providers/kuberay';
import type { ObservedWorkload } from '../../../../src/translate/providers/provider';

/* eslint-disable @typescript-eslint/no-explicit-any */

function model(spec: Partial<LLMModel['spec']> = {}, name = 'qwen', uid?: string): LLMModel {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name, namespace: 'ml', ...(uid ? { uid } : {}) },
    spec: {
      model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' },
      provider: { name: 'kuberay' },
      resources: { gpu: { count: 2, type: 'nvidia' } },
      access: { public: true },
      ...spec,
    },
  } as LLMModel;
}

const rayService = (m: LLMModel, context = {}) => translateKubeRay(m, context).objects[0] as Record<string, any>;
const serveConfig = (rs: Record<string, any>) => parse(rs.spec.serveConfigV2, { version: '1.1' });
const llmConfig = (rs: Record<string, any>) => serveConfig(rs).applications[0].args.llm_configs[0];
const head = (rs: Record<string, any>) => rs.spec.rayClusterConfig.headGroupSpec;
const workers = (rs: Record<string, any>) => rs.spec.rayClusterConfig.workerGroupSpecs[0];

describe('KubeRay provider: translation', () => {
  it('declares the ray.io/v1 RayService resource it needs', () => {
    expect(kuberayProvider.name).toBe('kuberay');
    expect(kuberayProvider.resources).toEqual([{ group: 'ray.io', kind: 'RayService', versions: ['v1'], installHint: expect.stringContaining('KubeRay operator') }]);
  });

  it('creates one RayService and the endpoint picker, owned by the model', () => {
    const t = translateKubeRay(model({}, 'qwen', 'uid-1'), {});
    expect(t.errors).toEqual([]);
    expect(t.objects.map((o) => `${o.apiVersion} ${o.kind}/${o.metadata.name}`)).toEqual([
      'ray.io/v1 RayService/qwen',
      'v1 ServiceAccount/qwen-epp',
      'rbac.authorization.k8s.io/v1 Role/qwen-epp',
      'rbac.authorization.k8s.io/v1 RoleBinding/qwen-epp',
      'v1 ConfigMap/qwen-epp',
      'apps/v1 Deployment/qwen-epp',
      'v1 Service/qwen-epp',
    ]);
    for (const o of t.objects) {
      expect(o.metadata.namespace).toBe('ml');
      expect(o.metadata.ownerReferences).toEqual([{ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', name: 'qwen', uid: 'uid-1', controller: true, blockOwnerDeletion: true }]);
    }
    expect(t.workload).toEqual({ apiVersion: 'ray.io/v1', kind: 'RayService', name: 'qwen' });
    expect(t.servingPool).toEqual({
      selector: { 'llm.nebari.dev/model': 'qwen', 'llm.nebari.dev/role': 'serving', 'ray.io/serve': 'true' },
      targetPort: 8000,
      endpointPickerPort: 9002,
    });
    expect(kuberayObjectNames('qwen')).toMatchObject({ rayService: 'qwen', serveService: 'qwen-serve-svc', epp: 'qwen-epp' });
  });

  it('writes the detected apiVersion', () => {
    const t = kuberayProvider.translate(model(), {}, { RayService: 'ray.io/v1beta1' });
    expect(t.objects[0].apiVersion).toBe('ray.io/v1beta1');
    expect(t.workload.apiVersion).toBe('ray.io/v1beta1');
  });

  it('runs Ray Serve LLM with vLLM for the Hugging Face model', () => {
    const rs = rayService(model({ model: { name: 'Qwen/Qwen3-8B', source: 'huggingface', revision: 'abc123' }, serving: { replicas: 3 } }));
    expect(serveConfig(rs)).toEqual({
      applications: [
        {
          name: 'llm',
          import_path: 'ray.serve.llm:build_openai_app',
          route_prefix: '/',
          args: {
            llm_configs: [
              {
                model_loading_config: { model_id: 'Qwen/Qwen3-8B', model_source: 'Qwen/Qwen3-8B' },
                engine_kwargs: { tensor_parallel_size: 2, revision: 'abc123' },
                deployment_config: { autoscaling_config: { min_replicas: 3, initial_replicas: 3, max_replicas: 3 } },
              },
            ],
          },
        },
      ],
    });
    expect(typeof rs.spec.serveConfigV2).toBe('string');
  });

  it('passes vLLM flags as typed engine_kwargs, later ones winning', () => {
    const rs = rayService(
      model({
        serving: {
          tensorParallelism: 1,
          engineArgs: ['--max-model-len=8192', '--enforce-eager', '--gpu-memory-utilization', '0.85', '--dtype=on', '--max-model-len=4096', '--no-enable-prefix-caching', '--override-generation-config={"temperature":0.2}'],
        },
      }),
    );
    expect(llmConfig(rs).engine_kwargs).toEqual({
      tensor_parallel_size: 1,
      max_model_len: 4096,
      enforce_eager: true,
      gpu_memory_utilization: 0.85,
      dtype: 'on',
      enable_prefix_caching: false,
      override_generation_config: { temperature: 0.2 },
    });
    // `on` stays a string for KubeRay's YAML 1.1 parser.
    expect(rs.spec.serveConfigV2).toContain('dtype: "on"');
  });

  it('builds a CPU-only head and a GPU worker group sized from the model', () => {
    const rs = rayService(model({ serving: { replicas: 2 } }));
    const cluster = rs.spec.rayClusterConfig;
    expect(cluster.rayVersion).toBe('2.52.0');
    expect(cluster.enableInTreeAutoscaling).toBe(true);
    expect(head(rs).rayStartParams).toEqual({ 'num-cpus': '0', 'num-gpus': '0', 'dashboard-host': '0.0.0.0' });
    const headContainer = head(rs).template.spec.containers[0];
    expect(headContainer).toMatchObject({ name: 'ray-head', image: DEFAULT_RAY_IMAGE, resources: { requests: { cpu: '1', memory: '4Gi' }, limits: { memory: '8Gi' } } });
    // No ports on the head: KubeRay's defaults (including serve 8000) then build the Services.
    expect(headContainer.ports).toBeUndefined();
    expect(workers(rs)).toMatchObject({ groupName: 'gpu-workers', replicas: 2, minReplicas: 0, maxReplicas: 32, rayStartParams: { 'num-gpus': '2', 'num-cpus': '4' } });
    const worker = workers(rs).template.spec;
    expect(worker.containers[0]).toMatchObject({
      name: 'ray-worker',
      image: DEFAULT_RAY_IMAGE,
      ports: [{ name: 'serve', containerPort: 8000, protocol: 'TCP' }],
      resources: { requests: { cpu: '4', 'nvidia.com/gpu': '2' }, limits: { 'nvidia.com/gpu': '2' } },
    });
    expect(worker.tolerations).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
  });

  it('labels the Ray pods with our labels only, the workers matching the serving pool', () => {
    const t = translateKubeRay(model(), {});
    const rs = t.objects[0] as Record<string, any>;
    expect(head(rs).template.metadata.labels).toEqual({ 'llm.nebari.dev/model': 'qwen', 'llm.nebari.dev/role': 'ray-head' });
    const workerLabels = workers(rs).template.metadata.labels;
    expect(workerLabels).toEqual({ 'llm.nebari.dev/model': 'qwen', 'llm.nebari.dev/role': 'serving' });
    // KubeRay adds ray.io/serve=true to the worker pods; the rest of the selector is ours.
    expect({ ...workerLabels, 'ray.io/serve': 'true' }).toEqual(t.servingPool.selector);
    // The RayService itself carries the shared provider labels.
    expect(rs.metadata.labels).toMatchObject({ 'app.kubernetes.io/managed-by': 'nebari-llm-serving', 'llm.nebari.dev/role': 'serving' });
  });

  it('maps resources, token, environment and placement onto the workers', () => {
    const rs = rayService(
      model({
        model: { name: 'meta-llama/Llama-3.1-8B-Instruct', source: 'huggingface', authSecretName: 'hf' },
        resources: { gpu: { count: 1, type: 'amd.com/gpu' }, requests: { cpu: '8', memory: '32Gi' }, limits: { memory: '48Gi' } },
        serving: { env: [{ name: 'VLLM_LOGGING_LEVEL', value: 'DEBUG' }] },
        scheduling: {
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'llm', effect: 'NoSchedule' }],
          nodeSelector: { pool: 'gpu' },
          affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } },
        },
      }),
    );
    const spec = workers(rs).template.spec;
    const worker = spec.containers[0];
    const token = { name: 'HF_TOKEN', valueFrom: { secretKeyRef: { name: 'hf', key: 'HF_TOKEN' } } };
    expect(worker.env).toEqual([token, { name: 'VLLM_LOGGING_LEVEL', value: 'DEBUG' }]);
    expect(head(rs).template.spec.containers[0].env).toEqual(worker.env);
    expect(worker.resources).toEqual({ requests: { cpu: '8', memory: '32Gi', 'amd.com/gpu': '1' }, limits: { memory: '48Gi', 'amd.com/gpu': '1' } });
    expect(workers(rs).rayStartParams).toEqual({ 'num-gpus': '1', 'num-cpus': '8' });
    expect(spec.tolerations).toEqual([
      { key: 'amd.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'dedicated', operator: 'Equal', value: 'llm', effect: 'NoSchedule' },
    ]);
    expect(spec.nodeSelector).toEqual({ pool: 'gpu' });
    expect(spec.affinity).toEqual({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } });
    expect(llmConfig(rs).engine_kwargs).toEqual({ tensor_parallel_size: 1 });
  });

  it('leaves the CPU count to KubeRay when the user sets a CPU limit, and keeps a user GPU toleration', () => {
    const rs = rayService(
      model({
        resources: { gpu: { count: 4, type: 'nvidia' }, limits: { cpu: '16' } },
        scheduling: { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Equal', value: 'present', effect: 'NoSchedule' }] },
      }),
    );
    expect(workers(rs).rayStartParams).toEqual({ 'num-gpus': '4' });
    expect(workers(rs).template.spec.containers[0].resources).toEqual({ requests: { 'nvidia.com/gpu': '4' }, limits: { cpu: '16', 'nvidia.com/gpu': '4' } });
    expect(workers(rs).template.spec.tolerations).toEqual([{ key: 'nvidia.com/gpu', operator: 'Equal', value: 'present', effect: 'NoSchedule' }]);
  });

  it('uses spec.serving.image, else the context image, and derives rayVersion from the tag', () => {
    const fromContext = rayService(model(), { rayImage: 'example/ray-llm:2.49.1-py311-cu128' });
    expect(workers(fromContext).template.spec.containers[0].image).toBe('example/ray-llm:2.49.1-py311-cu128');
    expect(fromContext.spec.rayClusterConfig.rayVersion).toBe('2.49.1');
    const fromModel = rayService(model({ serving: { image: 'example/custom-ray:latest' } }), { rayImage: 'ignored/ray:2.40.0' });
    expect(head(fromModel).template.spec.containers[0].image).toBe('example/custom-ray:latest');
    expect(workers(fromModel).template.spec.containers[0].image).toBe('example/custom-ray:latest');
    expect(fromModel.spec.rayClusterConfig.rayVersion).toBe('2.52.0');
    expect(rayVersionOf('example/ray-llm:2.50.1-py311-cu124@sha256:abc')).toBe('2.50.1');
    expect(rayVersionOf('example/ray-llm')).toBe('2.52.0');
  });

  it('keeps no GPU worker when scaled to zero', () => {
    const rs = rayService(model({ serving: { replicas: 0 } }));
    expect(workers(rs)).toMatchObject({ replicas: 0, minReplicas: 0, maxReplicas: 32 });
    expect(llmConfig(rs).deployment_config).toEqual({ autoscaling_config: { min_replicas: 0, initial_replicas: 0, max_replicas: 1 } });
  });

  it('merges spec.provider.overrides into the RayService and ignores the keys the operator owns', () => {
    const overrides = {
      apiVersion: 'ray.io/v1alpha1',
      kind: 'RayCluster',
      metadata: { name: 'other', labels: { evil: 'yes' } },
      status: { serviceStatus: 'Running' },
      spec: {
        upgradeStrategy: { type: 'None' },
        rayClusterConfig: { rayVersion: '2.53.0', headGroupSpec: { rayStartParams: { 'num-cpus': '2' } } },
      },
    };
    const t = translateKubeRay(model({ provider: { name: 'kuberay', overrides } }), {});
    const rs = t.objects[0] as Record<string, any>;
    expect(rs.apiVersion).toBe('ray.io/v1');
    expect(rs.kind).toBe('RayService');
    expect(rs.metadata.name).toBe('qwen');
    expect(rs.metadata.labels.evil).toBeUndefined();
    expect(rs.status).toBeUndefined();
    expect(rs.spec.upgradeStrategy).toEqual({ type: 'None' });
    expect(rs.spec.rayClusterConfig.rayVersion).toBe('2.53.0');
    // Objects merge key by key: the rest of the head start parameters and the workers stay.
    expect(head(rs).rayStartParams).toEqual({ 'num-cpus': '2', 'num-gpus': '0', 'dashboard-host': '0.0.0.0' });
    expect(workers(rs).groupName).toBe('gpu-workers');
    expect(typeof rs.spec.serveConfigV2).toBe('string');
    // Only the RayService takes overrides.
    expect(t.objects.slice(1).every((o) => !JSON.stringify(o).includes('upgradeStrategy'))).toBe(true);
  });

  it('names the RayService as a DNS-1035 label of at most 47 characters', () => {
    expect(rayServiceName('qwen')).toBe('qwen');
    const long = 'a-really-long-model-name-that-is-more-than-forty-seven-characters';
    for (const name of [long, 'llama-3.1-8b', '3b-model', `${'x'.repeat(37)}-yyyy.zz`]) {
      const n = rayServiceName(name);
      expect(n.length).toBeLessThanOrEqual(47);
      expect(n).toMatch(/^[a-z]([-a-z0-9]*[a-z0-9])?$/);
      expect(rayServiceName(name)).toBe(n);
    }
    expect(rayServiceName('llama-3.1-8b')).not.toBe(rayServiceName('llama-3-1-8b'));
    expect(rayServiceName('3b-model')).toMatch(/^m-3b-model-[0-9a-f]{8}$/);
    expect(translateKubeRay(model({}, long), {}).workload.name).toBe(rayServiceName(long));
  });
});

describe('KubeRay provider: what it cannot serve', () => {
  const errorsOf = (spec: Partial<LLMModel['spec']>) => translateKubeRay(model(spec), {});

  it.each([
    [{ model: { name: 'm', source: 'oci', image: 'example/weights:1' } }, 'spec.model.source', /^spec\.model\.source: oci is not supported by the kuberay provider.*set source to huggingface/],
    [{ model: { name: 'm', source: 'huggingface', storage: { type: 'pvc', size: '200Gi' } } }, 'spec.model.storage', /remove spec\.model\.storage$/],
    [{ serving: { command: ['python3', 'serve.py'] } }, 'spec.serving.command', /KubeRay starts Ray/],
    [{ resources: { gpu: { count: 0, type: 'nvidia' } } }, 'spec.resources.gpu.count', /request at least one GPU/],
    [{ serving: { tensorParallelism: 4 } }, 'spec.serving.tensorParallelism', /^spec\.serving\.tensorParallelism: 4 is larger than spec\.resources\.gpu\.count \(2\)/],
    [{ serving: { dataParallelism: 2 } }, 'spec.serving.dataParallelism', /raise spec\.serving\.replicas/],
    [{ serving: { engineArgs: ['--port=9000'] } }, 'spec.serving.engineArgs', /--port cannot be set with the kuberay provider/],
    [{ serving: { engineArgs: ['--tensor-parallel-size', '2'] } }, 'spec.serving.engineArgs', /set spec\.serving\.tensorParallelism instead/],
    [{ serving: { engineArgs: ['--dtype=auto', 'serve'] } }, 'spec.serving.engineArgs', /"serve" is not a --flag/],
  ] as [Partial<LLMModel['spec']>, string, RegExp][])('%j is refused at %s', (spec, field, message) => {
    const t = errorsOf(spec);
    expect(t.objects).toEqual([]);
    expect(t.errors).toHaveLength(1);
    expect(t.errors[0].field).toBe(field);
    expect(t.errors[0].message).toMatch(message);
    // The workload and pool are still named, for status reporting.
    expect(t.workload.kind).toBe('RayService');
  });

  it('reports every problem at once', () => {
    const t = errorsOf({ model: { name: 'm', source: 'oci', image: 'x' }, serving: { dataParallelism: 2, engineArgs: ['--model=x', 'y'] } });
    expect(t.errors.map((e) => e.field)).toEqual(['spec.model.source', 'spec.serving.dataParallelism', 'spec.serving.engineArgs', 'spec.serving.engineArgs']);
  });

  it('parses flag values and counts CPUs', () => {
    expect(engineKwargsFromArgs(['--seed', '-1', '--max-num-seqs=256', '--quantization', 'fp8', '--trust-remote-code'], 'f').kwargs).toEqual({
      seed: -1,
      max_num_seqs: 256,
      quantization: 'fp8',
      trust_remote_code: true,
    });
    expect(cpuCount('500m')).toBe(1);
    expect(cpuCount('2.5')).toBe(3);
    expect(cpuCount(6)).toBe(6);
    expect(cpuCount('1k')).toBeUndefined();
  });
});

// Statuses as KubeRay writes them. v1.1: serviceStatus and per-cluster application statuses (the
// first cluster is "pending" until its applications run, then promoted to active). v1.7 adds
// conditions Ready / UpgradeInProgress and keeps serviceStatus as "Running" or empty.
const appStatuses = (app: string, deployment = 'HEALTHY', message = '') => ({
  llm: {
    status: app,
    ...(message ? { message } : {}),
    serveDeploymentStatuses: { 'LLMServer:Qwen--Qwen3-8B': { status: deployment }, OpenAiIngress: { status: 'HEALTHY' } },
  },
});
const condition = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message, lastTransitionTime: '2026-09-01T10:00:00Z', observedGeneration: 1 });
const v11 = {
  creating: { serviceStatus: 'WaitForServeDeploymentReady', pendingServiceStatus: { rayClusterName: 'qwen-x7k2p' }, activeServiceStatus: {} },
  deploying: { serviceStatus: 'WaitForServeDeploymentReady', pendingServiceStatus: { rayClusterName: 'qwen-x7k2p', applicationStatuses: appStatuses('DEPLOYING', 'UPDATING') } },
  running: { serviceStatus: 'Running', numServeEndpoints: 2, activeServiceStatus: { rayClusterName: 'qwen-x7k2p', applicationStatuses: appStatuses('RUNNING') }, pendingServiceStatus: {} },
  dashboardHiccup: { serviceStatus: 'FailedToGetServeDeploymentStatus', activeServiceStatus: { rayClusterName: 'qwen-x7k2p', applicationStatuses: appStatuses('RUNNING') } },
  deployFailed: {
    serviceStatus: 'WaitForServeDeploymentReady',
    pendingServiceStatus: {
      rayClusterName: 'qwen-x7k2p',
      applicationStatuses: appStatuses('DEPLOY_FAILED', 'UNHEALTHY', "Deploying app 'llm' failed with exception:\nTraceback (most recent call last):\n  ...\nOSError: Qwen/Qwen3-8B is not a local folder and is not a valid model identifier"),
    },
  },
  unhealthy: { serviceStatus: 'Running', activeServiceStatus: { rayClusterName: 'qwen-x7k2p', applicationStatuses: appStatuses('UNHEALTHY', 'UNHEALTHY') } },
  noCluster: { serviceStatus: 'FailedToGetOrCreateRayCluster' },
};
const v17 = {
  initializing: { conditions: [condition('Ready', 'False', 'Initializing', 'RayService is initializing')], serviceStatus: '' },
  deploying: {
    conditions: [condition('Ready', 'False', 'Initializing', 'RayService is initializing'), condition('UpgradeInProgress', 'False', 'NoActiveCluster', 'The active cluster does not exist')],
    pendingServiceStatus: { rayClusterName: 'qwen-9xq2w', applicationStatuses: appStatuses('DEPLOYING', 'UPDATING') },
  },
  ready: {
    conditions: [condition('Ready', 'True', 'NonZeroServeEndpoints', 'Number of serve endpoints is greater than 0'), condition('UpgradeInProgress', 'False', 'NoPendingCluster', 'Active Ray cluster exists and no pending Ray cluster')],
    serviceStatus: 'Running',
    numServeEndpoints: 3,
    activeServiceStatus: { rayClusterName: 'qwen-9xq2w', applicationStatuses: appStatuses('RUNNING') },
  },
  upgrading: {
    conditions: [condition('Ready', 'True', 'NonZeroServeEndpoints', 'Number of serve endpoints is greater than 0'), condition('UpgradeInProgress', 'True', 'BothActivePendingClustersExist', 'Both active and pending Ray clusters exist')],
    serviceStatus: 'Running',
    activeServiceStatus: { rayClusterName: 'qwen-9xq2w', applicationStatuses: appStatuses('RUNNING') },
    pendingServiceStatus: { rayClusterName: 'qwen-t4m8d', applicationStatuses: appStatuses('DEPLOYING', 'UPDATING') },
  },
  upgradeFailed: {
    conditions: [condition('Ready', 'True', 'NonZeroServeEndpoints', 'Number of serve endpoints is greater than 0'), condition('UpgradeInProgress', 'True', 'BothActivePendingClustersExist', 'Both active and pending Ray clusters exist')],
    serviceStatus: 'Running',
    activeServiceStatus: { rayClusterName: 'qwen-9xq2w', applicationStatuses: appStatuses('RUNNING') },
    pendingServiceStatus: { rayClusterName: 'qwen-t4m8d', applicationStatuses: appStatuses('DEPLOY_FAILED', 'UNHEALTHY', 'ValueError: max_model_len exceeds the model context') },
  },
  lostEndpoints: {
    conditions: [condition('Ready', 'False', 'ZeroServeEndpoints', 'Number of serve endpoints dropped to 0')],
    activeServiceStatus: { rayClusterName: 'qwen-9xq2w', applicationStatuses: appStatuses('RUNNING') },
  },
  invalid: { conditions: [condition('Ready', 'False', 'ValidationFailed', 'The RayService metadata is invalid: RayService name should be no more than 47 characters')] },
  timedOut: { conditions: [condition('Ready', 'False', 'InitializingTimeout', 'RayService failed to become ready within the configured timeout of 30m0s')] },
};

const pod = (ready: boolean, waitingReason?: string) => ({ phase: ready ? 'Running' : 'Pending', ready, initializing: false, ...(waitingReason ? { waitingReason } : {}) });
const observe = (status: unknown, pods = [pod(true)]): ObservedWorkload => ({ workload: { apiVersion: 'ray.io/v1', kind: 'RayService', metadata: { name: 'qwen', generation: 1 }, status }, pods });
const phaseOf = (status: unknown, pods = [pod(true)], replicas = 1) => kuberayPhase(model({ serving: { replicas } }), observe(status, pods));

describe('KubeRay provider: phase', () => {
  it('is Pending until the RayService exists and KubeRay has acted on it', () => {
    expect(kuberayPhase(model(), { pods: [] })).toEqual({ phase: 'Pending', ready: 0, desired: 1, message: 'waiting for the RayService to be created' });
    expect(phaseOf(undefined, [])).toMatchObject({ phase: 'Pending', message: expect.stringContaining('is the KubeRay operator running?') });
    expect(phaseOf(v17.initializing, [])).toEqual({ phase: 'Pending', ready: 0, desired: 1, message: 'KubeRay: Initializing: RayService is initializing; the RayCluster is not created yet' });
  });

  it('maps KubeRay v1.1 statuses', () => {
    expect(phaseOf(v11.creating, [pod(false)])).toMatchObject({ phase: 'Starting', message: 'KubeRay: WaitForServeDeploymentReady; 0/1 serving replicas ready' });
    expect(phaseOf(v11.deploying, [pod(false)])).toMatchObject({ phase: 'Starting', message: 'KubeRay: WaitForServeDeploymentReady; Serve application llm is DEPLOYING; 0/1 serving replicas ready' });
    expect(phaseOf(v11.running)).toEqual({ phase: 'Ready', ready: 1, desired: 1, message: '1/1 serving replicas ready' });
    // A failed dashboard query does not take a running cluster out of Ready.
    expect(phaseOf(v11.dashboardHiccup)).toMatchObject({ phase: 'Ready' });
    expect(phaseOf(v11.deployFailed, [pod(false)])).toMatchObject({
      phase: 'Error',
      ready: 0,
      message: expect.stringMatching(/^Serve application llm is DEPLOY_FAILED: Deploying app 'llm' failed with exception:[\s\S]*OSError: Qwen\/Qwen3-8B is not a local folder/),
    });
    expect(phaseOf(v11.unhealthy, [pod(true), pod(false)], 2)).toMatchObject({ phase: 'Degraded', ready: 1, desired: 2, message: 'Serve application llm is UNHEALTHY: LLMServer:Qwen--Qwen3-8B: UNHEALTHY' });
    expect(phaseOf(v11.unhealthy, [pod(false)])).toMatchObject({ phase: 'Error' });
    expect(phaseOf(v11.noCluster, [])).toEqual({ phase: 'Error', ready: 0, desired: 1, message: 'KubeRay: FailedToGetOrCreateRayCluster' });
  });

  it('maps KubeRay v1.7 conditions', () => {
    expect(phaseOf(v17.deploying, [pod(false)])).toMatchObject({ phase: 'Starting', message: 'KubeRay: Initializing: RayService is initializing; Serve application llm is DEPLOYING; 0/1 serving replicas ready' });
    expect(phaseOf(v17.ready, [pod(true), pod(true)], 2)).toEqual({ phase: 'Ready', ready: 2, desired: 2, message: '2/2 serving replicas ready' });
    expect(phaseOf(v17.upgrading, [pod(true), pod(false)])).toEqual({ phase: 'Ready', ready: 1, desired: 1, message: '1/1 serving replicas ready; KubeRay is preparing a new RayCluster (qwen-t4m8d)' });
    expect(phaseOf(v17.upgradeFailed)).toMatchObject({
      phase: 'Degraded',
      message: 'the update does not deploy on the new RayCluster, the previous one keeps serving (1/1 serving replicas ready): Serve application llm is DEPLOY_FAILED: ValueError: max_model_len exceeds the model context',
    });
    expect(phaseOf(v17.lostEndpoints, [pod(false)])).toMatchObject({ phase: 'Degraded', message: 'KubeRay: ZeroServeEndpoints: Number of serve endpoints dropped to 0' });
    expect(phaseOf(v17.invalid, [])).toMatchObject({ phase: 'Error', message: expect.stringContaining('KubeRay: ValidationFailed: The RayService metadata is invalid') });
    expect(phaseOf(v17.timedOut, [])).toMatchObject({ phase: 'Error', message: expect.stringContaining('InitializingTimeout') });
  });

  it('compares KubeRay readiness with the serving worker pods', () => {
    expect(phaseOf(v17.ready, [pod(true), pod(false)], 2)).toMatchObject({ phase: 'Degraded', ready: 1, desired: 2, message: '1/2 serving replicas ready' });
    expect(phaseOf(v17.ready, [pod(false)])).toMatchObject({ phase: 'Starting', message: expect.stringContaining('waiting for the Ray worker pods to become ready (0/1') });
    expect(phaseOf(v17.deploying, [pod(false, 'ImagePullBackOff')])).toMatchObject({ phase: 'Error', message: 'a Ray worker pod is stuck: ImagePullBackOff' });
    expect(phaseOf(v17.ready, [pod(true), pod(false, 'CrashLoopBackOff')], 2)).toMatchObject({ phase: 'Degraded', message: 'a Ray worker pod is stuck: CrashLoopBackOff' });
    expect(phaseOf(v17.ready, [], 0)).toEqual({ phase: 'Ready', ready: 0, desired: 0, message: 'scaled to zero replicas: no GPU worker is kept' });
  });

  it('keeps the start and the end of a long Ray traceback', () => {
    const traceback = `Deploying app 'llm' failed with exception:\n${'  File "x.py", line 1\n'.repeat(200)}torch.OutOfMemoryError: CUDA out of memory`;
    const p = phaseOf({ pendingServiceStatus: { rayClusterName: 'c', applicationStatuses: appStatuses('DEPLOY_FAILED', 'UNHEALTHY', traceback) } }, []);
    expect(p.phase).toBe('Error');
    expect(p.message.length).toBeLessThanOrEqual(1000);
    expect(p.message).toMatch(/^Serve application llm is DEPLOY_FAILED: Deploying app 'llm' failed/);
    expect(p.message).toMatch(/ … [\s\S]*torch\.OutOfMemoryError: CUDA out of memory$/);
  });
});
