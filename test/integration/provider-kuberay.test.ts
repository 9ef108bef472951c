// The KubeRay provider against the released RayService CRDs (KubeRay v1.1.0, the oldest supported,
// then v1.7.0, which replaces it) in a real kube-apiserver: the translated RayService is admitted
// and stored without a field pruned, a status written through the status subresource the way
// KubeRay writes it is stored too, and the provider reads Ready from it. A private API server,
// because this file replaces a CRD that other files may use on the shared one.
import * as path from 'path';
import type * as k8s from '@kubernetes/client-node';
import type { LLMModelV1beta1 as LLMModel } from '../../src/api/v1beta1';
import { kuberayProvider } from '../../src/translate/providers/kuberay';
import { installCRDs, rest, startControlPlane, testFieldManager, uniqueName, upstreamCrdDir, type ControlPlane } from '../support/cluster';
import { waitFor } from '../support/processes';
import { asStored } from './chart-webhooks';

/* eslint-disable @typescript-eslint/no-explicit-any */

const crdFile = (version: string) => path.join(upstreamCrdDir(), 'kuberay', version, 'ray.io_rayservices.yaml');

/** As the API server stores it through the chart's webhooks (defaults included), as the operator reads it. */
function model(namespace: string): Promise<LLMModel> {
  return asStored({
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name: 'qwen3-8b', namespace },
    spec: {
      model: { name: 'Qwen/Qwen3-8B', source: 'huggingface', revision: 'main', authSecretName: 'hf-token' },
      provider: { name: 'kuberay', overrides: { spec: { rayClusterConfig: { headGroupSpec: { serviceType: 'ClusterIP' } } } } },
      resources: { gpu: { count: 2, type: 'nvidia' }, requests: { memory: '32Gi' }, limits: { memory: '48Gi' } },
      serving: { replicas: 2, tensorParallelism: 2, engineArgs: ['--max-model-len=8192', '--enforce-eager'], env: [{ name: 'VLLM_LOGGING_LEVEL', value: 'INFO' }] },
      scheduling: {
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'llm', effect: 'NoSchedule' }],
        nodeSelector: { 'node.kubernetes.io/instance-type': 'g6.12xlarge' },
      },
      access: { public: true },
    },
  } as LLMModel);
}

/** Paths of `written` whose value the API server did not store as written (pruned or changed). */
function notStored(written: unknown, stored: unknown, at = ''): string[] {
  if (Array.isArray(written)) {
    if (!Array.isArray(stored) || stored.length !== written.length) return [at || '.'];
    return written.flatMap((item, i) => notStored(item, stored[i], `${at}[${i}]`));
  }
  if (written !== null && typeof written === 'object') {
    if (stored === null || typeof stored !== 'object' || Array.isArray(stored)) return [at || '.'];
    return Object.entries(written).flatMap(([key, value]) => notStored(value, (stored as Record<string, unknown>)[key], `${at}.${key}`));
  }
  return written === stored ? [] : [at];
}

/** Paths the API server added (CRD defaults), for the log. */
function added(written: unknown, stored: unknown, at = ''): string[] {
  if (Array.isArray(stored) && Array.isArray(written)) return stored.flatMap((item, i) => added(written[i], item, `${at}[${i}]`));
  if (stored !== null && typeof stored === 'object' && !Array.isArray(stored)) {
    if (written === undefined) return [at];
    return Object.entries(stored).flatMap(([key, value]) => added((written as Record<string, unknown>)?.[key], value, `${at}.${key}`));
  }
  return written === undefined ? [at] : [];
}

const appStatuses = {
  llm: {
    status: 'RUNNING',
    serveDeploymentStatuses: { 'LLMServer:Qwen--Qwen3-8B': { status: 'HEALTHY' }, OpenAiIngress: { status: 'HEALTHY' } },
  },
};

/** What KubeRay v1.1 writes once the applications run: serviceStatus, per-cluster statuses. */
function statusV11(generation: number) {
  return {
    serviceStatus: 'Running',
    numServeEndpoints: 3,
    observedGeneration: generation,
    lastUpdateTime: '2026-09-01T10:05:00Z',
    activeServiceStatus: {
      rayClusterName: 'qwen3-8b-x7k2p',
      applicationStatuses: { llm: { ...appStatuses.llm, healthLastUpdateTime: '2026-09-01T10:05:00Z' } },
      rayClusterStatus: {
        state: 'ready',
        availableWorkerReplicas: 2,
        desiredWorkerReplicas: 2,
        minWorkerReplicas: 0,
        maxWorkerReplicas: 32,
        desiredGPU: '4',
        lastUpdateTime: '2026-09-01T10:04:30Z',
        head: { podIP: '10.0.0.12', serviceIP: '10.96.0.40' },
        observedGeneration: 1,
      },
    },
    pendingServiceStatus: {},
  };
}

/** What KubeRay v1.7 writes once ready: conditions, serviceStatus kept as "Running". */
function statusV17(generation: number) {
  const at = '2026-09-01T10:05:00Z';
  return {
    conditions: [
      { type: 'Ready', status: 'True', reason: 'NonZeroServeEndpoints', message: 'Number of serve endpoints is greater than 0', lastTransitionTime: at, observedGeneration: generation },
      { type: 'UpgradeInProgress', status: 'False', reason: 'NoPendingCluster', message: 'Active Ray cluster exists and no pending Ray cluster', lastTransitionTime: at, observedGeneration: generation },
    ],
    serviceStatus: 'Running',
    numServeEndpoints: 3,
    observedGeneration: generation,
    lastUpdateTime: at,
    activeServiceStatus: {
      rayClusterName: 'qwen3-8b-9xq2w',
      applicationStatuses: appStatuses,
      rayClusterStatus: {
        state: 'ready',
        readyWorkerReplicas: 2,
        availableWorkerReplicas: 2,
        desiredWorkerReplicas: 2,
        minWorkerReplicas: 0,
        maxWorkerReplicas: 32,
        desiredGPU: '4',
        lastUpdateTime: '2026-09-01T10:04:30Z',
        head: { podIP: '10.0.0.12', podName: 'qwen3-8b-9xq2w-head-5mbcd', serviceIP: '10.96.0.40', serviceName: 'qwen3-8b-9xq2w-head-svc' },
        observedGeneration: 1,
      },
    },
    pendingServiceStatus: {},
  };
}

describe('KubeRay provider against the released RayService CRDs', () => {
  let plane: ControlPlane;
  let kc: k8s.KubeConfig;

  beforeAll(async () => {
    plane = await startControlPlane({ mode: 'apiserver' });
    kc = plane.kubeConfig();
  });
  afterAll(async () => {
    if (kc) rest(kc).close();
    await plane?.stop();
  });

  it.each([
    ['v1.1.0', statusV11],
    ['v1.7.0', statusV17],
  ])('KubeRay %s admits the translated RayService unchanged and its Ready status reads as Ready', async (version, status) => {
    const client = rest(kc);
    const names = await installCRDs([crdFile(version)], kc);
    expect(names).toEqual(['rayservices.ray.io']);
    if (version === 'v1.7.0') {
      // The CRD was replaced: wait until the API server validates with the new schema, i.e. a
      // field only v1.7.0 knows survives a dry run.
      await waitFor('the v1.7.0 RayService schema in use', async () => {
        const probe = kuberayProvider.translate(await model('default'), {}, { RayService: 'ray.io/v1' }).objects[0];
        const dry = await client.create<any>({ ...probe, spec: { ...(probe.spec as object), excludeHeadPodFromServeSvc: true } } as any, { dryRun: true, fieldManager: testFieldManager });
        return dry.spec.excludeHeadPodFromServeSvc === true;
      }, { timeoutMs: 60000 });
    }

    const namespace = uniqueName(`kuberay-${version.replace(/\./g, '')}`);
    await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, { fieldManager: testFieldManager });
    const m = await model(namespace);
    const t = kuberayProvider.translate(m, {}, { RayService: 'ray.io/v1' });
    expect(t.errors).toEqual([]);
    const rayService = t.objects[0];
    expect(rayService.kind).toBe('RayService');

    try {
      // Server-side apply, as the operator writes it.
      const applied = await client.apply<any>(rayService, { fieldManager: 'nebari-llm-serving' });
      expect(applied.metadata.name).toBe(t.workload.name);
      const stored = await client.get<any>(rayService);
      expect(stored).toBeDefined();
      expect(notStored(rayService.spec, stored.spec)).toEqual([]);
      expect(stored.metadata.labels).toEqual(rayService.metadata.labels);
      expect(stored.spec.serveConfigV2).toBe((rayService.spec as any).serveConfigV2);
      console.log(`KubeRay ${version}: defaults added to the RayService: ${added(rayService.spec, stored.spec).join(', ') || 'none'}`);

      // Not reconciled yet: no status.
      expect(kuberayProvider.phase(m, { workload: stored, pods: [] }).phase).toBe('Pending');

      // KubeRay's status, through the status subresource.
      const written = status(stored.metadata.generation);
      await client.mergePatch(rayService, { status: written }, { subresource: 'status', fieldManager: 'kuberay-operator' });
      const reconciled = await client.get<any>(rayService);
      expect(notStored(written, reconciled.status)).toEqual([]);
      expect(notStored(rayService.spec, reconciled.spec)).toEqual([]);

      const pods = [
        { phase: 'Running', ready: true, initializing: false },
        { phase: 'Running', ready: true, initializing: false },
      ];
      expect(kuberayProvider.phase(m, { workload: reconciled, pods })).toEqual({ phase: 'Ready', ready: 2, desired: 2, message: '2/2 serving replicas ready' });
    } finally {
      await client.delete(rayService);
    }
    expect(await client.get(rayService)).toBeUndefined();

    if (version === 'v1.1.0') {
      // Why fields newer than v1.1.0 are never written: its schema prunes them (and the check
      // above would name them).
      const withNewField = { ...rayService, spec: { ...(rayService.spec as object), excludeHeadPodFromServeSvc: true } };
      const pruned = await client.create<any>(withNewField as any, { dryRun: true, fieldManager: testFieldManager });
      expect(notStored(withNewField.spec, pruned.spec)).toEqual(['.excludeHeadPodFromServeSvc']);
      // Why rayStartParams is always written: v1.1.0's schema requires it on every group.
      const withoutParams = JSON.parse(JSON.stringify(rayService));
      delete withoutParams.spec.rayClusterConfig.headGroupSpec.rayStartParams;
      await expect(client.create(withoutParams, { dryRun: true, fieldManager: testFieldManager })).rejects.toMatchObject({
        code: 422,
        body: expect.stringContaining('rayStartParams'),
      });
    }
  });
});
