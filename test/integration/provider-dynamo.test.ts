// Admission of the Dynamo provider's DynamoGraphDeployment by a real kube-apiserver loaded with
// the released Dynamo CRDs (v1.0.0, then v1.0.2 replacing it): for every API version the CRD
// serves and this build writes, the translated graph of a few model specs is applied, read back
// and compared with what was sent (a field pruned, defaulted or rewritten would mean the upstream
// schema does not say what the translator thinks); then a status is written through the status
// subresource as Dynamo's controller writes it, and the provider's phase is read from it.
// A private API server (no controllers) keeps these CRDs away from the other test files.
import * as path from 'path';
import type * as k8s from '@kubernetes/client-node';
import type { LLMModelV1beta1 as LLMModel } from '../../src/api/v1beta1';
import { dynamoProvider, DYNAMO_FRONTEND, DYNAMO_WORKER } from '../../src/translate/providers/dynamo';
import type { Manifest } from '../../src/translate/providers/provider';
import { applyObject, getObject, installCRDs, rest, startControlPlane, uniqueName, upstreamCrdDir, type ControlPlane } from '../support/cluster';
import { asStored } from './chart-webhooks';

const RELEASES = ['v1.0.0', 'v1.0.2'];
const CRD_NAME = 'dynamographdeployments.nvidia.com';
const IMAGE = 'example/dynamo-vllm-runtime:1.0.0';

type Json = unknown;
type Obj = Record<string, Json>;

function llmModel(namespace: string, name: string, spec: Partial<LLMModel['spec']>): LLMModel {
  return {
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name, namespace, uid: '6f1c7a52-4d0e-4c55-9b1f-0d2f6a8c9e31' },
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

/** The model specs whose graphs are admitted: the example's, and one using every mapped field. */
function models(namespace: string): Promise<LLMModel[]> {
  // As the API server stores them through the chart's webhooks (defaults included), as the operator reads them.
  return Promise.all([
    llmModel(namespace, 'llama-70b-dynamo', {}),
    llmModel(namespace, 'qwen3-8b-served-by-dynamo-with-every-mapped-field', {
      model: { name: 'Qwen/Qwen3-8B', source: 'huggingface', revision: '9c925d64d72725edaf899c6cb9c377fd0709d9c5', storage: { type: 'emptyDir' } },
      resources: { gpu: { count: 2, type: 'nvidia' }, requests: { cpu: 8, memory: '64Gi' }, limits: { memory: '96Gi', 'ephemeral-storage': '200Gi' } },
      serving: {
        image: IMAGE,
        replicas: 1,
        dataParallelism: 2,
        engineArgs: ['--max-model-len=8192', '--enforce-eager'],
        command: ['python3', '-m', 'dynamo.vllm'],
        env: [
          { name: 'VLLM_LOGGING_LEVEL', value: 'DEBUG' },
          { name: 'EXTRA_TOKEN', valueFrom: { secretKeyRef: { name: 'extra', key: 'token' } } },
        ],
      },
      scheduling: {
        tolerations: [{ key: 'spot', operator: 'Equal', value: 'true', effect: 'NoExecute', tolerationSeconds: 300 }],
        nodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' },
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'node-pool', operator: 'In', values: ['gpu-a', 'gpu-b'] }] }],
            },
          },
        },
      },
      provider: {
        name: 'dynamo',
        overrides: {
          spec: {
            envs: [{ name: 'DYN_LOG', value: 'debug' }],
            services: {
              [DYNAMO_FRONTEND]: { resources: { requests: { cpu: '2', memory: '4Gi' } } },
              [DYNAMO_WORKER]: { sharedMemory: { size: '16Gi' }, extraPodSpec: { terminationGracePeriodSeconds: 120 } },
            },
          },
        },
      },
    }),
  ].map(asStored));
}

/** Paths where `stored` differs from `sent`, as `<path>: added|removed|changed …`. */
function differences(sent: Json, stored: Json, at = ''): string[] {
  if (sent === stored) return [];
  const isObject = (v: Json): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (Array.isArray(sent) && Array.isArray(stored)) {
    if (sent.length !== stored.length) return [`${at}: length ${sent.length} -> ${stored.length}`];
    return sent.flatMap((item, i) => differences(item, stored[i], `${at}[${i}]`));
  }
  if (isObject(sent) && isObject(stored)) {
    return [...new Set([...Object.keys(sent), ...Object.keys(stored)])].sort().flatMap((k) => {
      const p = at ? `${at}.${k}` : k;
      if (!(k in stored)) return [`${p}: removed`];
      if (!(k in sent)) return [`${p}: added ${JSON.stringify(stored[k])}`];
      return differences(sent[k], stored[k], p);
    });
  }
  return [`${at}: changed ${JSON.stringify(sent)} -> ${JSON.stringify(stored)}`];
}

/** Everything but the server-owned metadata. */
function comparable(o: Obj & { metadata: Obj }): Obj {
  const { metadata, status: _status, ...rest } = o;
  return { ...rest, metadata: { name: metadata.name, namespace: metadata.namespace, labels: metadata.labels, ownerReferences: metadata.ownerReferences } };
}

/** A status as Dynamo's controller writes it for `graph`, in the given state. */
function dynamoStatus(graph: Obj & { metadata: Obj }, state: 'pending' | 'successful', workersReady: number, workers: number): Obj {
  const name = String(graph.metadata.name);
  const ready = state === 'successful';
  return {
    state,
    observedGeneration: graph.metadata.generation,
    conditions: [
      {
        type: 'Ready',
        status: ready ? 'True' : 'False',
        reason: ready ? 'all_resources_are_ready' : 'some_resources_are_not_ready',
        message: ready ? 'All resources are ready' : `Resources not ready: ${name}-vllmworker: ${workersReady}/${workers} replicas ready`,
        lastTransitionTime: '2026-09-01T10:00:00Z',
        observedGeneration: graph.metadata.generation,
      },
    ],
    services: {
      [DYNAMO_FRONTEND]: { componentKind: 'Deployment', componentName: `${name}-frontend`, componentNames: [`${name}-frontend`], replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
      [DYNAMO_WORKER]: {
        componentKind: 'Deployment',
        componentName: `${name}-vllmworker`,
        componentNames: [`${name}-vllmworker`],
        replicas: workers,
        updatedReplicas: workers,
        readyReplicas: workersReady,
        availableReplicas: workersReady,
      },
    },
  };
}

let plane: ControlPlane;
let kc: k8s.KubeConfig;

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'apiserver' });
  kc = plane.kubeConfig();
}, 240000);

afterAll(async () => {
  await plane?.stop();
});

describe.each(RELEASES)('Dynamo %s DynamoGraphDeployment CRD', (release) => {
  let versions: string[] = [];

  beforeAll(async () => {
    // The second release's CRD replaces the first's (same name), as an upgrade of Dynamo would.
    expect(await installCRDs([path.join(upstreamCrdDir(), 'dynamo', release)], kc)).toEqual([CRD_NAME]);
    rest(kc).forgetDiscovery();
    const crd = (await getObject({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: CRD_NAME } }, kc)) as Obj & {
      spec: { versions: Array<{ name: string; served: boolean }> };
    };
    const served = crd.spec.versions.filter((v) => v.served).map((v) => v.name);
    versions = dynamoProvider.resources![0].versions.filter((v) => served.includes(v));
  }, 120000);

  test('serves a version this build writes (v1alpha1)', () => {
    expect(versions).toEqual(['v1alpha1']);
  });

  test('admits every translated graph unchanged and reads Ready from the status Dynamo writes', async () => {
    const client = rest(kc);
    for (const version of versions) {
      const namespace = uniqueName(`dynamo-${version}`);
      await applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, { kubeConfig: kc });
      for (const model of await models(namespace)) {
        const t = dynamoProvider.translate(model, {}, { DynamoGraphDeployment: `nvidia.com/${version}` });
        expect(t.errors).toEqual([]);
        const sent = t.objects.find((o) => o.kind === 'DynamoGraphDeployment') as Manifest;
        expect(sent.apiVersion).toBe(`nvidia.com/${version}`);
        expect(t.workload).toEqual({ apiVersion: `nvidia.com/${version}`, kind: 'DynamoGraphDeployment', name: sent.metadata.name });
        await applyObject(sent, { kubeConfig: kc, fieldManager: 'nebari-llm-serving' });
        const stored = (await getObject(sent, kc)) as Obj & { metadata: Obj };
        expect(stored).toBeDefined();
        expect(differences(comparable(sent as unknown as Obj & { metadata: Obj }), comparable(stored))).toEqual([]);

        const ref = { apiVersion: sent.apiVersion, kind: sent.kind, metadata: { name: sent.metadata.name, namespace } };
        const workers = model.spec.serving?.replicas ?? 1;
        const frontendPod = { phase: 'Running', ready: true, initializing: false };

        // Rolling out: Dynamo reports pending with some workers not ready yet.
        const pending = dynamoStatus(stored, 'pending', workers - 1, workers);
        await client.mergePatch(ref, { status: pending }, { fieldManager: 'dynamo-operator', subresource: 'status' });
        const progressing = (await getObject(ref, kc)) as Obj & { metadata: Obj };
        expect(differences(pending, progressing.status)).toEqual([]);
        expect(dynamoProvider.phase(model, { workload: progressing, pods: [frontendPod] }).phase).toBe(workers > 1 ? 'Degraded' : 'Starting');

        // Every component ready.
        const successful = dynamoStatus(stored, 'successful', workers, workers);
        await client.mergePatch(ref, { status: successful }, { fieldManager: 'dynamo-operator', subresource: 'status' });
        const done = (await getObject(ref, kc)) as Obj & { metadata: Obj };
        expect(differences(successful, done.status)).toEqual([]);
        // The status subresource leaves the spec alone.
        expect(differences(comparable(sent as unknown as Obj & { metadata: Obj }), comparable(done))).toEqual([]);
        expect(dynamoProvider.phase(model, { workload: done, pods: [frontendPod] })).toEqual({
          phase: 'Ready',
          ready: workers,
          desired: workers,
          message: `${workers}/${workers} vLLM workers ready (Dynamo: All resources are ready)`,
        });

        expect(await client.delete(ref)).toBe(true);
        expect(await getObject(ref, kc)).toBeUndefined();
      }
      await client.delete({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    }
  });

  test('control: a field the schema lacks is refused or pruned, never stored', async () => {
    const namespace = uniqueName('dynamo-control');
    await applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, { kubeConfig: kc });
    const [model] = await models(namespace);
    const sent = structuredClone(dynamoProvider.translate(model, {}).objects.find((o) => o.kind === 'DynamoGraphDeployment')) as unknown as Obj & {
      metadata: Obj;
      spec: { services: Record<string, Obj> };
    };
    // A field Dynamo's v1alpha1 schema does not have: dropped (or refused), never stored.
    sent.spec.services[DYNAMO_WORKER].gpus = 4;
    let outcome: string[];
    try {
      await applyObject(sent, { kubeConfig: kc, fieldManager: 'nebari-llm-serving' });
      outcome = differences(comparable(sent), comparable((await getObject(sent as never, kc)) as Obj & { metadata: Obj }));
    } catch (err) {
      outcome = [`refused: ${(err as Error).message.includes('gpus') ? 'unknown field gpus' : (err as Error).message}`];
    }
    console.log(`Dynamo ${release} CRD, a field the schema lacks: ${outcome.join('; ')}`);
    expect([['spec.services.VllmWorker.gpus: removed'], ['refused: unknown field gpus']]).toContainEqual(outcome);
    await rest(kc).delete(sent as never);
  });
});
