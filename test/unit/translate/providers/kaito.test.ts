import type { LLMModelV1beta1 as LLMModel } from '../../../../src/api/v1beta1';
import {
  KAITO_WORKSPACE_NAME_MAX,
  kaitoPhase,
  kaitoProvider,
  kaitoWorkspaceName,
  translateKAITO,
} from '../../../../src/translate/providers/kaito';
import type { ObservedWorkload } from '../../../../src/translate/providers/provider';

function model(spec: Partial<LLMModel['spec']> = {}, name = 'phi-4-kaito'): LLMModel {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name, namespace: 'ml', uid: 'uid-1' },
    spec: {
      model: { name: 'microsoft/phi-4', source: 'huggingface' },
      resources: { gpu: { count: 1, type: 'nvidia' } },
      access: { public: true },
      provider: { name: 'kaito' },
      ...spec,
    },
  } as LLMModel;
}

const OWNER = [{ apiVersion: 'llm.nebari.dev/v1beta1', kind: 'LLMModel', name: 'phi-4-kaito', uid: 'uid-1', controller: true, blockOwnerDeletion: true }];
const workspaceOf = (t: ReturnType<typeof translateKAITO>) => t.objects.find((o) => o.kind === 'Workspace') as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The Workspace body (everything but apiVersion and metadata) for the default model. */
const DEFAULT_BODY = {
  kind: 'Workspace',
  resource: { count: 1, labelSelector: { matchLabels: { 'llm.nebari.dev/model': 'phi-4-kaito' } } },
  inference: { preset: { name: 'microsoft/phi-4' } },
};

describe('KAITO provider: translation', () => {
  it('declares the kaito.sh Workspace, v1beta1 preferred over v1alpha1', () => {
    expect(kaitoProvider.name).toBe('kaito');
    expect(kaitoProvider.resources).toEqual([
      { group: 'kaito.sh', kind: 'Workspace', versions: ['v1beta1', 'v1alpha1'], installHint: expect.stringMatching(/KAITO.*workspace controller.*CRDs.*v0\.4\.5/) },
    ]);
  });

  it.each([
    ['kaito.sh/v1beta1', { Workspace: 'kaito.sh/v1beta1' }],
    ['kaito.sh/v1alpha1', { Workspace: 'kaito.sh/v1alpha1' }],
    ['kaito.sh/v1beta1', undefined],
  ])('writes a %s Workspace (served %j) and the endpoint picker', (apiVersion, served) => {
    const t = translateKAITO(model(), {}, served);
    expect(t.errors).toEqual([]);
    expect(t.objects.map((o) => `${o.apiVersion} ${o.kind}/${o.metadata.name}`)).toEqual([
      `${apiVersion} Workspace/phi-4-kaito`,
      'v1 ServiceAccount/phi-4-kaito-epp',
      'rbac.authorization.k8s.io/v1 Role/phi-4-kaito-epp',
      'rbac.authorization.k8s.io/v1 RoleBinding/phi-4-kaito-epp',
      'v1 ConfigMap/phi-4-kaito-epp',
      'apps/v1 Deployment/phi-4-kaito-epp',
      'v1 Service/phi-4-kaito-epp',
    ]);
    expect(workspaceOf(t)).toEqual({
      apiVersion,
      ...DEFAULT_BODY,
      metadata: {
        name: 'phi-4-kaito',
        namespace: 'ml',
        labels: {
          'app.kubernetes.io/component': 'serving',
          'app.kubernetes.io/managed-by': 'nebari-llm-serving',
          'app.kubernetes.io/name': 'nebari-llm-serving',
          'llm.nebari.dev/model': 'phi-4-kaito',
          'llm.nebari.dev/role': 'serving',
        },
        ownerReferences: OWNER,
        annotations: { 'kaito.sh/runtime': 'vllm' },
      },
    });
    for (const o of t.objects) expect(o.metadata.ownerReferences).toEqual(OWNER);
    expect(t.workload).toEqual({ apiVersion, kind: 'Workspace', name: 'phi-4-kaito' });
    // KAITO labels its inference pods kaito.sh/workspace=<name>; vLLM listens on 5000.
    expect(t.servingPool).toEqual({ selector: { 'kaito.sh/workspace': 'phi-4-kaito' }, targetPort: 5000, endpointPickerPort: 9002 });
  });

  it('always sets the required resource.labelSelector: the model label, or spec.scheduling.nodeSelector', () => {
    expect(workspaceOf(translateKAITO(model(), {})).resource.labelSelector).toEqual({ matchLabels: { 'llm.nebari.dev/model': 'phi-4-kaito' } });
    const pinned = translateKAITO(model({ scheduling: { nodeSelector: { 'node.kubernetes.io/instance-type': 'Standard_NC24ads_A100_v4' } } }), {});
    expect(workspaceOf(pinned).resource).toEqual({ count: 1, labelSelector: { matchLabels: { 'node.kubernetes.io/instance-type': 'Standard_NC24ads_A100_v4' } } });
  });

  it('maps the auth Secret to presetOptions.modelAccessSecret on v1beta1', () => {
    const t = translateKAITO(model({ model: { name: 'meta-llama/Llama-3.1-8B-Instruct', source: 'huggingface', authSecretName: 'hf-token' } }), {}, { Workspace: 'kaito.sh/v1beta1' });
    expect(t.errors).toEqual([]);
    expect(workspaceOf(t).inference).toEqual({ preset: { name: 'meta-llama/Llama-3.1-8B-Instruct', presetOptions: { modelAccessSecret: 'hf-token' } } });
  });

  it('refuses the auth Secret on v1alpha1, which has no modelAccessSecret', () => {
    const t = translateKAITO(model({ model: { name: 'x/y', source: 'huggingface', authSecretName: 'hf-token' } }), {}, { Workspace: 'kaito.sh/v1alpha1' });
    expect(t.objects).toEqual([]);
    expect(t.errors).toHaveLength(1);
    expect(t.errors[0].field).toBe('spec.model.authSecretName');
    expect(t.errors[0].message).toMatch(/^spec\.model\.authSecretName: the API server serves KAITO Workspaces as kaito\.sh\/v1alpha1, .*upgrade KAITO/);
  });

  it('merges spec.provider.overrides into the Workspace and ignores apiVersion, kind, metadata and status there', () => {
    const overrides = {
      apiVersion: 'kaito.sh/v1alpha1',
      kind: 'Deployment',
      metadata: { name: 'other', namespace: 'elsewhere', labels: { evil: 'yes' } },
      status: { state: 'Ready' },
      resource: { instanceType: 'Standard_NC24ads_A100_v4', preferredNodes: ['gpu-0'] },
      inference: { config: 'phi-4-vllm-flags', preset: { presetOptions: { modelAccessSecret: 'other-token' } } },
    };
    const t = translateKAITO(model({ provider: { name: 'kaito', overrides } }), {}, { Workspace: 'kaito.sh/v1beta1' });
    expect(t.errors).toEqual([]);
    const ws = workspaceOf(t);
    expect(ws.apiVersion).toBe('kaito.sh/v1beta1');
    expect(ws.kind).toBe('Workspace');
    expect(ws.metadata.name).toBe('phi-4-kaito');
    expect(ws.metadata.namespace).toBe('ml');
    expect(ws.metadata.labels.evil).toBeUndefined();
    expect(ws.status).toBeUndefined();
    expect(ws.resource).toEqual({
      count: 1,
      instanceType: 'Standard_NC24ads_A100_v4',
      preferredNodes: ['gpu-0'],
      labelSelector: { matchLabels: { 'llm.nebari.dev/model': 'phi-4-kaito' } },
    });
    expect(ws.inference).toEqual({ config: 'phi-4-vllm-flags', preset: { name: 'microsoft/phi-4', presetOptions: { modelAccessSecret: 'other-token' } } });
    expect(t.workload).toEqual({ apiVersion: 'kaito.sh/v1beta1', kind: 'Workspace', name: 'phi-4-kaito' });
  });

  it('refuses an oci model source, naming the field and the fix, and still names the workload', () => {
    const t = translateKAITO(model({ model: { name: 'phi-4', source: 'oci', image: 'example/phi-4-weights:1' } }), {});
    expect(t.objects).toEqual([]);
    expect(t.errors).toEqual([
      {
        field: 'spec.model.source',
        message: expect.stringMatching(/^spec\.model\.source: oci is not supported by the KAITO provider: .*; use source huggingface .* or provider vllm$/),
      },
    ]);
    expect(t.workload).toEqual({ apiVersion: 'kaito.sh/v1beta1', kind: 'Workspace', name: 'phi-4-kaito' });
    expect(t.servingPool.selector).toEqual({ 'kaito.sh/workspace': 'phi-4-kaito' });
  });

  it.each([
    ['spec.model.revision', { model: { name: 'x/y', source: 'huggingface', revision: 'abc123' } }],
    ['spec.serving.replicas', { serving: { replicas: 2 } }],
    ['spec.serving.replicas', { serving: { replicas: 0 } }],
    ['spec.resources.gpu.count', { resources: { gpu: { count: 0, type: 'nvidia' } } }],
    ['spec.serving.image', { serving: { image: 'example/vllm:2' } }],
    ['spec.serving.command', { serving: { command: ['vllm', 'serve'] } }],
    ['spec.serving.tensorParallelism', { serving: { tensorParallelism: 2 } }],
    ['spec.serving.dataParallelism', { serving: { dataParallelism: 2 } }],
    ['spec.serving.engineArgs', { serving: { engineArgs: ['--max-model-len=8192'] } }],
    ['spec.serving.env', { serving: { env: [{ name: 'A', value: 'b' }] } }],
  ])('refuses %s, which KAITO cannot honour (%j)', (field, spec) => {
    const t = translateKAITO(model(spec as Partial<LLMModel['spec']>), {});
    expect(t.objects).toEqual([]);
    expect(t.errors.map((e) => e.field)).toEqual([field]);
    expect(t.errors[0].message.startsWith(`${field}: `)).toBe(true);
  });

  it('accepts the defaults the API server fills in (replicas 1, dataParallelism 1, pvc storage)', () => {
    const t = translateKAITO(model({ serving: { replicas: 1, dataParallelism: 1, updateStrategy: 'Recreate' }, model: { name: 'x/y', source: 'huggingface', storage: { type: 'pvc' } } }), {});
    expect(t.errors).toEqual([]);
  });

  it('names the Workspace after the model, as a DNS-1035 label of at most 52 characters', () => {
    expect(kaitoWorkspaceName('phi-4-kaito')).toBe('phi-4-kaito');
    const long = 'a'.repeat(60);
    const dotted = 'qwen3.5-8b';
    const digit = '4o-mini';
    for (const name of [long, dotted, digit, 'x'.repeat(52), 'y'.repeat(53), `${'b'.repeat(50)}.c`]) {
      const ws = kaitoWorkspaceName(name);
      expect(ws.length).toBeLessThanOrEqual(KAITO_WORKSPACE_NAME_MAX);
      expect(ws).toMatch(/^[a-z]([-a-z0-9]*[a-z0-9])?$/);
      expect(kaitoWorkspaceName(name)).toBe(ws);
    }
    expect(kaitoWorkspaceName('x'.repeat(52))).toBe('x'.repeat(52));
    expect(kaitoWorkspaceName(dotted)).toMatch(/^qwen3-5-8b-[0-9a-f]{8}$/);
    expect(kaitoWorkspaceName(digit)).toMatch(/^m-4o-mini-[0-9a-f]{8}$/);
    expect(kaitoWorkspaceName('qwen3.5-8b')).not.toBe(kaitoWorkspaceName('qwen3-5-8b'));
    const t = translateKAITO(model({}, long), {});
    expect(t.workload.name).toBe(kaitoWorkspaceName(long));
    expect(t.servingPool.selector).toEqual({ 'kaito.sh/workspace': kaitoWorkspaceName(long) });
  });
});

// Status objects as KAITO's workspace controller writes them: condition types, reasons and the
// success/pending messages as its source sets them (v0.12 adds `state`); failure messages carry the
// error KAITO met, so the ones here are examples.
const cond = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message, lastTransitionTime: '2026-11-30T10:00:00Z', observedGeneration: 1 });
const READY = {
  state: 'Ready',
  workerNodes: ['aks-gpu-00000000-vmss000000'],
  conditions: [
    cond('NodeClaimReady', 'True', 'NodeClaimsReady', 'Enough NodeClaims are ready'),
    cond('ResourceReady', 'True', 'workspaceResourceStatusSuccess', 'workspace resource is ready'),
    cond('InferenceReady', 'True', 'WorkspaceInferenceStatusSuccess', 'Inference has been deployed successfully'),
    cond('WorkspaceSucceeded', 'True', 'workspaceSucceeded', 'workspace succeeds'),
  ],
};
const WAITING_FOR_NODES = {
  state: 'Pending',
  conditions: [
    cond('NodeClaimReady', 'False', 'NodeClaimNotReady', 'Ready NodeClaims are not enough'),
    cond('ResourceReady', 'False', 'NodeClaimNotReady', 'Ready NodeClaims are not enough'),
    cond('InferenceReady', 'False', 'WorkspaceInferenceStatusPending', 'Inference workload is not ready'),
    cond('WorkspaceSucceeded', 'False', 'workspacePending', 'workspace is waiting for inference workload readiness'),
  ],
};
const STARTING = {
  state: 'Pending',
  conditions: [
    cond('ResourceReady', 'True', 'workspaceResourceStatusSuccess', 'workspace resource is ready'),
    cond('InferenceReady', 'False', 'WorkspaceInferenceStatusPending', 'Inference workload is not ready'),
    cond('WorkspaceSucceeded', 'False', 'workspacePending', 'workspace is waiting for inference workload readiness'),
  ],
};
const INFERENCE_FAILED = {
  conditions: [
    cond('ResourceReady', 'True', 'workspaceResourceStatusSuccess', 'workspace resource is ready'),
    cond('InferenceReady', 'False', 'WorkspaceInferenceStatusFailed', 'statefulset phi-4-kaito did not become ready within 30m0s'),
    cond('WorkspaceSucceeded', 'False', 'workspaceFailed', 'statefulset phi-4-kaito did not become ready within 30m0s'),
  ],
};
const NODES_FAILED = {
  conditions: [
    cond('NodeClaimReady', 'False', 'nodeClaimFailedCreation', 'all requested instance types were unavailable during launch'),
    cond('ResourceReady', 'False', 'workspaceResourceStatusFailed', 'all requested instance types were unavailable during launch'),
  ],
};

const pod = (p: Partial<ObservedWorkload['pods'][number]> = {}) => ({ ready: false, initializing: false, ...p });
const observed = (status: unknown, pods: ObservedWorkload['pods'] = []): ObservedWorkload => ({ workload: { apiVersion: 'kaito.sh/v1beta1', kind: 'Workspace', status }, pods });

describe('KAITO provider: phase', () => {
  it('is Ready with 1/1 when InferenceReady is True, carrying KAITO’s message', () => {
    expect(kaitoPhase(model(), observed(READY, [pod({ ready: true })]))).toEqual({
      phase: 'Ready',
      ready: 1,
      desired: 1,
      message: 'KAITO reports the inference ready: Inference has been deployed successfully',
    });
    // Older releases (v1alpha1, v0.3.x) write no `state`; the conditions alone decide.
    expect(kaitoPhase(model(), observed({ conditions: READY.conditions, workerNodes: ['n'] })).phase).toBe('Ready');
  });

  it('is Pending before the Workspace exists and before KAITO reports', () => {
    expect(kaitoPhase(model(), { pods: [] })).toEqual({ phase: 'Pending', ready: 0, desired: 1, message: 'waiting for the KAITO Workspace to be created' });
    expect(kaitoPhase(model(), observed(undefined))).toMatchObject({ phase: 'Pending', message: expect.stringContaining("is KAITO's workspace controller running?") });
  });

  it('is Pending while KAITO waits for GPU nodes', () => {
    expect(kaitoPhase(model(), observed(WAITING_FOR_NODES))).toEqual({
      phase: 'Pending',
      ready: 0,
      desired: 1,
      message: "waiting for KAITO's GPU nodes: ResourceReady is False (NodeClaimNotReady): Ready NodeClaims are not enough",
    });
  });

  it('is Starting once the nodes are ready, Downloading while the serving pod initializes', () => {
    expect(kaitoPhase(model(), observed(STARTING, [pod()]))).toEqual({
      phase: 'Starting',
      ready: 0,
      desired: 1,
      message: 'KAITO is starting the inference: InferenceReady is False (WorkspaceInferenceStatusPending): Inference workload is not ready',
    });
    expect(kaitoPhase(model(), observed(STARTING, [pod({ initializing: true })])).phase).toBe('Downloading');
  });

  it('is Error when a condition is False with a failure reason, carrying the message', () => {
    expect(kaitoPhase(model(), observed(INFERENCE_FAILED))).toEqual({
      phase: 'Error',
      ready: 0,
      desired: 1,
      message: 'KAITO reports InferenceReady is False (WorkspaceInferenceStatusFailed): statefulset phi-4-kaito did not become ready within 30m0s',
    });
    expect(kaitoPhase(model(), observed(NODES_FAILED))).toMatchObject({
      phase: 'Error',
      message: 'KAITO reports NodeClaimReady is False (nodeClaimFailedCreation): all requested instance types were unavailable during launch',
    });
    expect(kaitoPhase(model(), observed({ ...STARTING, state: 'Failed' })).phase).toBe('Error');
  });

  it('is Error when a serving pod is stuck, Degraded when serving while KAITO reports a failure', () => {
    expect(kaitoPhase(model(), observed(STARTING, [pod({ waitingReason: 'ImagePullBackOff' })]))).toMatchObject({ phase: 'Error', message: expect.stringContaining('ImagePullBackOff') });
    const failingAfterReady = { conditions: [...READY.conditions.slice(0, 3), cond('WorkspaceSucceeded', 'False', 'workspaceFailed', 'failed to update the Service')] };
    expect(kaitoPhase(model(), observed(failingAfterReady))).toEqual({
      phase: 'Degraded',
      ready: 1,
      desired: 1,
      message: 'KAITO serves the model but reports WorkspaceSucceeded is False (workspaceFailed): failed to update the Service',
    });
  });

  it('is Pending while the Workspace is being deleted', () => {
    const deleting = { conditions: [...READY.conditions, cond('WorkspaceDeleting', 'True', 'workspaceDeleted', 'workspace is being deleted')] };
    expect(kaitoPhase(model(), observed(deleting)).phase).toBe('Pending');
  });
});
