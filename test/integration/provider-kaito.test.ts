// The KAITO provider against a real kube-apiserver with KAITO's released Workspace CRDs, installed
// one after the other as an upgrade would (v0.3.0, then v0.4.5, then v0.12.0 over it). For every
// API version each CRD serves, the translated Workspace is admitted and stored without a pruned
// field, a status written through the status subresource (as KAITO's controller writes it) maps
// to Ready, and the limits the docs state hold: v0.3.0 serves no v1beta1, and only v0.12.0's
// v1beta1 keeps presetOptions.modelAccessSecret. The model translated is the one the API server
// stores through the chart's webhooks (defaults included), as the operator reads it.
import * as path from 'path';
import type { LLMModelV1beta1 as LLMModel } from '../../src/api/v1beta1';
import { KubeObject, KubeRest, objectRef } from '../../src/kube/rest';
import { fieldManager as FIELD_MANAGER } from '../../src/operator/runtime/apply';
import { kaitoProvider } from '../../src/translate/providers/kaito';
import type { Manifest } from '../../src/translate/providers/provider';
import { installCRDs, readManifests, uniqueName, upstreamCrdDir } from '../support/cluster';
import { type ControlPlane, startControlPlane } from '../support/control-plane';
import { waitFor } from '../support/processes';
import { asStored } from './chart-webhooks';

const PROVIDER_VERSIONS = kaitoProvider.resources![0].versions;

/** KAITO releases whose Workspace CRD is checked, oldest first, and the versions each must serve. */
const RELEASES = [
  { dir: 'kaito/v0.3.0', served: ['v1alpha1'] },
  { dir: 'kaito/v0.4.5', served: ['v1beta1', 'v1alpha1'] },
  { dir: 'kaito/v0.12.0', served: ['v1beta1', 'v1alpha1'] },
] as const;

let plane: ControlPlane;
let client: KubeRest;

function crdPath(dir: string): string {
  return path.join(upstreamCrdDir(), dir, 'kaito.sh_workspaces.yaml');
}

/** The versions the CRD file itself declares as served (read, not assumed). */
function servedInFile(dir: string): string[] {
  const crd = readManifests(crdPath(dir)).find((o) => o.kind === 'CustomResourceDefinition') as unknown as { spec: { versions: { name: string; served: boolean }[] } };
  return crd.spec.versions.filter((v) => v.served).map((v) => v.name);
}

function llmModel(namespace: string, spec: Partial<LLMModel['spec']> = {}): Promise<LLMModel> {
  return asStored({
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name: 'phi-4-kaito', namespace, uid: '2f0f1a52-6d4c-4f7e-9a51-3c1f6f1f0b11' },
    spec: {
      model: { name: 'microsoft/phi-4', source: 'huggingface' },
      resources: { gpu: { count: 1, type: 'nvidia' } },
      access: { groups: ['research'] },
      provider: { name: 'kaito', overrides: { resource: { instanceType: 'Standard_NC24ads_A100_v4' } } },
      ...spec,
    },
  } as LLMModel);
}

function workspaceOf(model: LLMModel, version: string): Manifest {
  const t = kaitoProvider.translate(model, {}, { Workspace: `kaito.sh/${version}` });
  expect(t.errors).toEqual([]);
  const ws = t.objects.find((o) => o.kind === 'Workspace');
  expect(ws).toBeDefined();
  return ws!;
}

/** Everything but metadata and status: the fields a structural schema could prune. */
function body(obj: Record<string, unknown>): Record<string, unknown> {
  const { metadata: _metadata, status: _status, ...rest } = obj;
  return rest;
}

/** The translated Workspace as the API server must store it: unchanged, plus the schema default of preset.accessMode. */
function expectedStored(ws: Manifest): Record<string, unknown> {
  const inference = ws.inference as { preset: Record<string, unknown> };
  return { ...body(ws), inference: { ...inference, preset: { ...inference.preset, accessMode: 'public' } } };
}

const condition = (type: string, status: string, reason: string, message: string) => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-11-30T10:00:00Z',
  observedGeneration: 1,
});

/** The status KAITO's workspace controller writes once the inference serves (v0.12 also sets state). */
function readyStatus(withState: boolean): Record<string, unknown> {
  return {
    workerNodes: ['aks-gpu-00000000-vmss000000'],
    conditions: [
      condition('ResourceReady', 'True', 'workspaceResourceStatusSuccess', 'workspace resource is ready'),
      condition('InferenceReady', 'True', 'WorkspaceInferenceStatusSuccess', 'Inference has been deployed successfully'),
      condition('WorkspaceSucceeded', 'True', 'workspaceSucceeded', 'workspace succeeds'),
    ],
    ...(withState ? { state: 'Ready' } : {}),
  };
}

async function createNamespace(prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

async function deleteWorkspace(ws: Manifest): Promise<void> {
  const ref = objectRef(ws.apiVersion, ws.kind, ws.metadata.name, ws.metadata.namespace);
  await client.delete(ref);
  await waitFor(`Workspace ${ws.metadata.namespace}/${ws.metadata.name} deleted`, async () => (await client.get(ref)) === undefined, { timeoutMs: 30_000 });
}

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'apiserver' });
  client = new KubeRest(plane.kubeConfig());
}, 180_000);

afterAll(async () => {
  client?.close();
  await plane?.stop();
});

describe.each(RELEASES)('KAITO $dir Workspace CRD', (release) => {
  beforeAll(async () => {
    expect(servedInFile(release.dir)).toEqual([...release.served].reverse());
    // Applied over the previous release's CRD (same name): waits for Established, then discovery.
    await installCRDs([crdPath(release.dir)], plane.kubeConfig());
    for (const version of ['v1alpha1', 'v1beta1']) {
      const want = (release.served as readonly string[]).includes(version);
      await waitFor(`kaito.sh/${version} Workspace ${want ? 'served' : 'not served'} after ${release.dir}`, async () => {
        client.forgetDiscovery();
        return (await client.isServed(`kaito.sh/${version}`, 'Workspace')) === want;
      }, { timeoutMs: 30_000 });
    }
  }, 120_000);

  const versions = PROVIDER_VERSIONS.filter((v) => (release.served as readonly string[]).includes(v));

  it.each(versions)('stores the translated kaito.sh/%s Workspace unpruned, and maps the controller’s ready status to Ready', async (version) => {
    const ns = await createNamespace('kaito');
    const model = await llmModel(ns);
    const ws = workspaceOf(model, version);
    await client.apply(ws, { fieldManager: FIELD_MANAGER });

    const stored = (await client.get(objectRef(ws.apiVersion, ws.kind, ws.metadata.name, ns)))!;
    expect(stored).toBeDefined();
    expect(body(stored)).toEqual(expectedStored(ws));
    expect(stored.metadata.labels).toEqual(ws.metadata.labels);
    expect(stored.metadata.annotations).toEqual(ws.metadata.annotations);
    expect(stored.metadata.ownerReferences).toEqual(ws.metadata.ownerReferences);

    // Before KAITO reports anything the model waits; then KAITO's controller writes its status.
    expect(kaitoProvider.phase(model, { workload: stored, pods: [] }).phase).toBe('Pending');
    const status = readyStatus(release.dir === 'kaito/v0.12.0' && version === 'v1beta1');
    await client.replace({ ...stored, status } as KubeObject, { subresource: 'status' });
    const reported = (await client.get(objectRef(ws.apiVersion, ws.kind, ws.metadata.name, ns)))!;
    expect((reported.status as { conditions: unknown[] }).conditions).toEqual(status.conditions);
    expect(body(reported)).toEqual(expectedStored(ws));
    expect(kaitoProvider.phase(model, { workload: reported, pods: [] })).toEqual({
      phase: 'Ready',
      ready: 1,
      desired: 1,
      message: 'KAITO reports the inference ready: Inference has been deployed successfully',
    });

    await deleteWorkspace(ws);
  });

  if (!(release.served as readonly string[]).includes('v1beta1')) {
    it('serves no kaito.sh/v1beta1: a v1beta1 Workspace cannot be created', async () => {
      const ns = await createNamespace('kaito-nobeta');
      const ws = workspaceOf(await llmModel(ns), 'v1beta1');
      // Asked directly (not through discovery), the API server answers 404 for the whole group version.
      await expect(client.request('POST', `/apis/kaito.sh/v1beta1/namespaces/${ns}/workspaces`, { body: ws })).rejects.toMatchObject({ code: 404 });
      await expect(client.isServed('kaito.sh/v1beta1', 'Workspace')).resolves.toBe(false);
    });
  }

  if ((release.served as readonly string[]).includes('v1beta1')) {
    const keeps = release.dir === 'kaito/v0.12.0';
    it(keeps ? 'keeps presetOptions.modelAccessSecret of a v1beta1 Workspace' : 'has no presetOptions.modelAccessSecret in v1beta1: server-side apply refuses it, a plain create drops it', async () => {
      const ns = await createNamespace('kaito-secret');
      const model = await llmModel(ns, { model: { name: 'meta-llama/Llama-3.1-8B-Instruct', source: 'huggingface', authSecretName: 'hf-token' } });
      const ws = workspaceOf(model, 'v1beta1');
      const ref = objectRef(ws.apiVersion, ws.kind, ws.metadata.name, ns);
      if (keeps) {
        await client.apply(ws, { fieldManager: FIELD_MANAGER });
        const stored = (await client.get(ref))!;
        expect(body(stored)).toEqual(expectedStored(ws));
        expect((stored.inference as { preset: { presetOptions?: unknown } }).preset.presetOptions).toEqual({ modelAccessSecret: 'hf-token' });
      } else {
        // The operator applies server-side: the unknown field fails the apply loudly (ApplyFailed on the model).
        await expect(client.apply(ws, { fieldManager: FIELD_MANAGER })).rejects.toMatchObject({
          code: 500,
          body: expect.stringContaining('.inference.preset.presetOptions.modelAccessSecret: field not declared in schema'),
        });
        expect(await client.get(ref)).toBeUndefined();
        // A plain create is pruned silently instead.
        await client.create(ws, { fieldManager: FIELD_MANAGER });
        const stored = (await client.get(ref))!;
        expect((stored.inference as { preset: unknown }).preset).toEqual({ name: 'meta-llama/Llama-3.1-8B-Instruct', accessMode: 'public', presetOptions: {} });
      }
      await deleteWorkspace(ws);
    });
  }
});
