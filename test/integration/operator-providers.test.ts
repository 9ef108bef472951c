// The LLMModel providers KAITO, Dynamo, KubeRay and llm-d, reconciled by the operator process on a
// private control plane (cluster mode: kwok runs pods) with the providers' real CRDs: the examples
// in examples/llmmodel/ wait with ProviderCRDUnavailable until the CRD is installed, then get their
// provider resource at the version the API server serves (recorded in status.provider.apiVersion),
// switch version when a newer CRD is installed while the operator runs, turn Ready when the
// provider's status says ready (written through the status subresource, as the provider's
// controller does) and carry its failure message; deleting the model waits for the resource and,
// past the bound, reports CleanupBlocked naming its finalizer, which it never removes. The chart's
// admission webhooks are on (served by the operator process, ./chart-webhooks), so every model is
// the object the API server stores for a user, mutating webhook defaults included. The four
// providers go through these steps at once (startProvider), against the one operator.
import * as fs from 'fs';
import * as path from 'path';
import { parse as parseYaml } from 'yaml';
import { ControlPlane, startControlPlane } from '../support/control-plane';
import { applyObject, installCRDs, upstreamCrdDir } from '../support/cluster';
import { waitFor } from '../support/processes';
import { diffCounts, requestCounts } from '../support/apiserver-requests';
import { KubeObject, KubeRest, objectRef } from '../../src/kube/rest';
import { OperatorProcess, condition, installGatewayCRDs, installOwnCRDs, isReadyAtGeneration, passthroughModel, providerCredential, startOperator } from './operator-support';
import { desiredApiKeySecret } from '../../src/translate/keys/api-keys';
import { CLEANUP_FINALIZER } from '../../src/api/common';
import { type ChartWebhooks, chartWebhooks, webhookPort } from './chart-webhooks';
import { admit } from '../../src/admission';
import type { LLMProviderName } from '../../src/api/llmmodel';
import type { LLMModelV1beta1 as LLMModel } from '../../src/api/v1beta1';
import { providers } from '../../src/translate/providers';

const ns = 'models';
const GROUP = 'llm.nebari.dev/v1beta1';
let plane: ControlPlane;
let client: KubeRest;
let operator: OperatorProcess;
let webhooks: ChartWebhooks;

interface ProviderCase {
  readonly provider: string;
  readonly example: string;
  /** Upstream CRD directories, installed one after the other (the later replaces the earlier). */
  readonly crds: readonly string[];
  /** status.provider.apiVersion expected after each CRD directory is installed. */
  readonly apiVersions: readonly string[];
  readonly kind: string;
  /** A provider kind that is not the workload, expected at this detected version. */
  readonly detected?: { apiVersion: string; kind: string };
  /** The status the provider's controller writes when serving; undefined: phase from pods (kwok). */
  readonly ready?: (resource: KubeObject) => Record<string, unknown>;
  /** A failing status and a piece of its message the model must carry. */
  readonly failed?: { status: (resource: KubeObject) => Record<string, unknown>; message: string };
  /** Serving pods the provider's operator would start (kwok runs them), with the pool's labels. */
  readonly servingPods?: number;
  /** What the example needs from the cluster before its pods can run (kwok runs them). */
  readonly prepare?: () => Promise<void>;
}

const cases: ProviderCase[] = [
  {
    provider: 'kaito',
    example: 'kaito.yaml',
    crds: ['kaito/v0.3.0', 'kaito/v0.12.0'],
    apiVersions: ['kaito.sh/v1alpha1', 'kaito.sh/v1beta1'],
    kind: 'Workspace',
    ready: READY_KAITO(),
    failed: FAILED_KAITO(),
  },
  {
    provider: 'dynamo',
    example: 'dynamo.yaml',
    crds: ['dynamo/v1.0.0', 'dynamo/v1.0.2'],
    apiVersions: ['nvidia.com/v1alpha1', 'nvidia.com/v1alpha1'],
    kind: 'DynamoGraphDeployment',
    ready: READY_DYNAMO(),
    failed: FAILED_DYNAMO(),
  },
  {
    provider: 'kuberay',
    example: 'kuberay.yaml',
    crds: ['kuberay/v1.1.0', 'kuberay/v1.7.0'],
    apiVersions: ['ray.io/v1', 'ray.io/v1'],
    kind: 'RayService',
    servingPods: 1,
    ready: READY_KUBERAY(),
    failed: FAILED_KUBERAY(),
  },
  {
    provider: 'llmd',
    example: 'llmd.yaml',
    crds: ['llm-d-router/v0.10.0'],
    // The served version is the InferenceObjective's; the workload read for the phase is the
    // model server Deployment, whose pods kwok runs.
    apiVersions: ['apps/v1'],
    kind: 'Deployment',
    detected: { apiVersion: 'llm-d.ai/v1alpha2', kind: 'InferenceObjective' },
    // The example pins H100 nodes and caches the model on a claim: label the simulated GPU node
    // and give the claim a volume to bind (there is no provisioner). The volume is reserved for
    // this model's claim: the Dynamo model's cache claim, pending meanwhile, must not take it.
    prepare: async () => {
      for (const node of (await client.list('v1', 'Node')).items) {
        await client.mergePatch(node, { metadata: { labels: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' } } });
      }
      const llmd = example('llmd.yaml') as unknown as LLMModel;
      const claim = providers.llmd.translate(llmd, {}, undefined).objects.find((o) => o.kind === 'PersistentVolumeClaim')!;
      const claimRef = { namespace: ns, name: claim.metadata!.name };
      const volume = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'model-cache' }, spec: { capacity: { storage: '100Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/model-cache' }, claimRef } };
      await client.create(volume as KubeObject);
    },
  },
];

function example(file: string): KubeObject {
  const obj = parseYaml(fs.readFileSync(path.join(__dirname, '..', '..', 'examples', 'llmmodel', file), 'utf8')) as KubeObject;
  return { ...obj, metadata: { ...obj.metadata, namespace: ns } };
}
const get = (apiVersion: string, kind: string, name: string) => client.get(objectRef(apiVersion, kind, name, ns));
const model = (name: string) => get(GROUP, 'LLMModel', name);
const status = (o: KubeObject | undefined) => (o?.status ?? {}) as { phase?: string; provider?: { apiVersion?: string; resourceKind?: string; resourceName?: string } };

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'cluster', nodes: 1 });
  const kc = plane.kubeConfig();
  await installOwnCRDs(kc);
  await installGatewayCRDs(kc);
  client = new KubeRest(kc);
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  // Secrets the examples reference (the Dynamo example reads a Hugging Face token).
  await client.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'hf-token', namespace: ns }, stringData: { HF_TOKEN: 'hf_test' } } as KubeObject);
  webhooks = chartWebhooks(kc, 'nls-test', ns);
  // The product's bounds, shortened: CleanupBlocked after 3 s, the provider resources (not watched)
  // read every 2 s instead of every 60 s once Ready (15 s before, 10 s while a deletion waits).
  operator = startOperator({
    kubeconfigPath: plane.kubeconfigPath,
    namespace: ns,
    name: 'providers-operator',
    env: { ...webhooks.operatorEnv, NLS_CLEANUP_BLOCKED_SECONDS: '3', NLS_PROVIDER_POLL_SECONDS: '2' },
  });
  await webhooks.register(webhookPort(await operator.waitForLine(/webhook server listening/)));
  for (const c of cases) runs.set(c.provider, startProvider(c));
}, 180_000);

afterAll(async () => {
  if (stepSeconds.length) console.log(`provider steps (s): ${stepSeconds.join('; ')}`);
  if (process.env.NLS_OPERATOR_LOG) fs.writeFileSync(process.env.NLS_OPERATOR_LOG, operator.lines.join('\n'));
  await webhooks?.close();
  if (operator?.child.exitCode === null) await operator.kill();
  client?.close();
  await plane?.stop();
});

// The providers are independent (their own CRDs, models and resources), so each one's steps run as
// a chain started once the operator is up, all four chains at once against the one API server and
// operator; each test below awaits its provider's step, which fails it with that step's error.
// Run one after the other, the providers spent most of the time waiting for the operator's polls.
interface ProviderRun {
  crds: Promise<void>;
  ready: Promise<void>;
  deletion: Promise<void>;
}
const runs = new Map<string, ProviderRun>();
/** Seconds each step took, printed at the end (the tests' own times include waiting for the chain). */
const stepSeconds: string[] = [];

function startProvider(c: ProviderCase): ProviderRun {
  const timed = async (step: string, body: () => Promise<void>) => {
    const started = Date.now();
    await body();
    stepSeconds.push(`${c.provider} ${step} ${((Date.now() - started) / 1000).toFixed(1)}`);
  };
  const after = (previous: Promise<void>, step: string, next: () => Promise<void>) =>
    previous.then(next, (err: Error) => {
      throw new Error(`${c.provider}: not run, since the step before failed (${step}): ${err.message}`);
    });
  const crds = timed('crds', () => crdsStep(c));
  const ready = after(crds, 'CRDs', () => timed('ready', () => readyStep(c)));
  const deletion = after(ready, 'Ready', () => timed('deletion', () => deletionStep(c)));
  // Rejections surface in the tests that await them; none must count as unhandled meanwhile.
  for (const p of [crds, ready, deletion]) p.catch(() => undefined);
  return { crds, ready, deletion };
}

describe.each(cases)('the $provider provider', (c) => {
  const run = () => runs.get(c.provider)!;

  it('waits with ProviderCRDUnavailable, then writes the served version, switches when a newer CRD is served', () => run().crds, 300_000);

  it('turns Ready from the provider status, and carries a failure message', () => run().ready, 300_000);

  it('deleting the model deletes the provider resource and waits for its finalizers', () => run().deletion, 300_000);
});

// spec.observability.tracing through the chart's webhooks: the API server stores the block with its
// defaults, the operator renders it into the Dynamo worker (engine argument and OTEL_* variables),
// KAITO reports the field it cannot honour, and the webhook refuses an endpoint that is no URL.
it('renders spec.observability.tracing as stored (defaults filled in), refuses it for KAITO and refuses a bad endpoint', async () => {
  const tracedModel = (name: string, provider: string, endpoint: string) => {
    const base = example(provider === 'kaito' ? 'kaito.yaml' : 'dynamo.yaml') as unknown as LLMModel;
    return { ...base, metadata: { name, namespace: ns }, spec: { ...base.spec, observability: { tracing: { endpoint } } } } as unknown as KubeObject;
  };
  const endpoint = 'http://otel-collector.observability:4317';
  const stored = await applyObject<KubeObject>(tracedModel('traced-dynamo', 'dynamo', endpoint), { kubeConfig: plane.kubeConfig(), fieldManager: 'user-manifests' });
  expect((stored.spec as LLMModel['spec']).observability).toEqual({ tracing: { endpoint, protocol: 'grpc', sampler: 'parentbased_traceidratio', ratio: 1 } });
  let worker: { envs?: { name: string; value?: string }[]; extraPodSpec?: { mainContainer?: { args?: string[] } } } | undefined;
  await waitFor('the traced DynamoGraphDeployment', async () => {
    const graph = (await client.list('nvidia.com/v1alpha1', 'DynamoGraphDeployment', { namespace: ns })).items.find((g) => g.metadata.ownerReferences?.[0]?.name === 'traced-dynamo');
    worker = (graph?.spec as { services?: Record<string, typeof worker> } | undefined)?.services?.VllmWorker;
    return worker !== undefined;
  }, { timeoutMs: 60_000 });
  expect(worker!.extraPodSpec?.mainContainer?.args).toContain(`--otlp-traces-endpoint=${endpoint}`);
  expect(worker!.envs).toEqual(
    expect.arrayContaining([
      { name: 'OTEL_SERVICE_NAME', value: 'traced-dynamo' },
      { name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', value: 'grpc' },
      { name: 'OTEL_TRACES_SAMPLER', value: 'parentbased_traceidratio' },
      { name: 'OTEL_TRACES_SAMPLER_ARG', value: '1' },
    ]),
  );

  await applyObject(tracedModel('traced-kaito', 'kaito', endpoint), { kubeConfig: plane.kubeConfig(), fieldManager: 'user-manifests' });
  await waitFor('traced-kaito BuildFailed', async () => condition(await model('traced-kaito'), 'ProviderReady')?.reason === 'BuildFailed', { timeoutMs: 60_000 });
  expect(condition(await model('traced-kaito'), 'ProviderReady')?.message).toContain('spec.observability.tracing: is not supported by the KAITO provider');

  await expect(applyObject(tracedModel('traced-bad', 'dynamo', 'otel-collector:4317'), { kubeConfig: plane.kubeConfig(), fieldManager: 'user-manifests' })).rejects.toThrow(
    /spec\.observability\.tracing\.endpoint: "otel-collector:4317" is not an absolute URL/,
  );
  for (const name of ['traced-dynamo', 'traced-kaito']) await client.delete(objectRef(GROUP, 'LLMModel', name, ns));
}, 150_000);

// The cleanup finalizer comes with the CREATE (the chart's mutating webhook), so the operator sends
// no PATCH for it. The API server records no owner for a field a webhook set, so a user's
// re-apply of the same manifest keeps it; the deletion still runs the cleanup and removes it.
it('a PassthroughModel created through the chart webhooks has the cleanup finalizer from its CREATE; the operator never writes it, a re-apply keeps it, deletion cleans up', async () => {
  await client.create(providerCredential(ns));
  const manifest = passthroughModel(ns, 'webhook-finalizer');
  const userApply = () => applyObject<KubeObject>(manifest, { kubeConfig: plane.kubeConfig(), fieldManager: 'user-manifests' });
  expect((await userApply()).metadata.finalizers).toEqual([CLEANUP_FINALIZER]);
  const ref = objectRef(GROUP, 'PassthroughModel', 'webhook-finalizer', ns);
  await waitFor('webhook-finalizer Ready', async () => isReadyAtGeneration(await client.get(ref)), { timeoutMs: 60_000 });
  expect((await userApply()).metadata.finalizers).toEqual([CLEANUP_FINALIZER]);
  // Only the user wrote the model itself: a finalizer PATCH by the operator would list its field manager here.
  const managedFields = ((await client.get(ref))!.metadata.managedFields ?? []) as { manager: string; subresource?: string }[];
  expect(managedFields.filter((f) => f.subresource !== 'status').map((f) => f.manager)).toEqual(['user-manifests']);
  expect(managedFields.filter((f) => f.subresource === 'status').map((f) => f.manager)).toEqual(['nebari-llm-serving-operator']);
  const keySecret = desiredApiKeySecret({ kind: 'PassthroughModel', name: 'webhook-finalizer', namespace: ns });
  const keySecretRef = objectRef('v1', 'Secret', keySecret.metadata.name, ns);
  expect(await client.get(keySecretRef)).toBeDefined();
  await client.delete(ref);
  await waitFor('webhook-finalizer gone', async () => (await client.get(ref)) === undefined, { timeoutMs: 60_000 });
  expect(await client.get(keySecretRef)).toBeUndefined();
}, 150_000);

const modelName = (c: ProviderCase) => example(c.example).metadata.name;

async function crdsStep(c: ProviderCase): Promise<void> {
  const name = () => modelName(c);
  await applyObject(example(c.example), { kubeConfig: plane.kubeConfig() });
  // Stored through the chart's webhooks: the spec the offline admission predicts, defaults included.
  const predicted = await admit(example(c.example), { operatorNamespace: ns });
  expect(predicted.problems).toEqual([]);
  expect((await model(name()))?.spec).toEqual(predicted.object.spec);
  await waitFor(`${c.provider}: ProviderCRDUnavailable`, async () => condition(await model(name()), 'ProviderReady')?.reason === 'ProviderCRDUnavailable', { timeoutMs: 60_000 });
  expect(condition(await model(name()), 'ProviderReady')?.message).toMatch(/install/i);

  for (const [i, dir] of c.crds.entries()) {
    await installCRDs([path.join(upstreamCrdDir(), dir)], plane.kubeConfig());
    const want = c.apiVersions[i];
    await waitFor(`${c.provider}: status.provider.apiVersion ${want} after ${dir}`, async () => status(await model(name())).provider?.apiVersion === want, { timeoutMs: 90_000 });
    const resource = await get(want, c.kind, status(await model(name())).provider!.resourceName ?? name());
    expect(resource?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'LLMModel', name: name(), controller: true });
    if (c.detected) expect(await get(c.detected.apiVersion, c.detected.kind, name())).toBeDefined();
  }
}

async function readyStep(c: ProviderCase): Promise<void> {
  const name = () => modelName(c);
  const s = status(await model(name()));
  const ref = objectRef(s.provider!.apiVersion!, s.provider!.resourceKind!, s.provider!.resourceName!, ns);
  // Written as the provider's operator would, and read back until stored whole: the crds step
  // just replaced the CRD, and a write that reaches the API server before its handler has the new
  // schema is pruned to the old one (KubeRay v1.1's RayService status has no conditions).
  const writeStatus = async (value: (resource: KubeObject) => Record<string, unknown>) => {
    await waitFor(`${c.provider}: ${c.kind} status stored as written`, async () => {
      const current = (await client.get(ref))!;
      const written = value(current);
      await client.replace({ ...current, status: written } as KubeObject, { subresource: 'status' });
      const stored = ((await client.get(ref)) as { status?: Record<string, unknown> } | undefined)?.status ?? {};
      return Object.keys(written).every((k) => sameJson(stored[k], written[k]));
    }, { timeoutMs: 60_000, intervalMs: 500 });
  };
  for (let i = 0; i < (c.servingPods ?? 0); i++) {
    // A Ray worker as KubeRay would start it: the labels the model's InferencePool selects.
    const selector = providers[c.provider as LLMProviderName].translate(example(c.example) as unknown as LLMModel, {}, { [c.kind]: s.provider!.apiVersion! }).servingPool.selector;
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `${name()}-worker-${i}`, namespace: ns, labels: { ...selector } },
      spec: { containers: [{ name: 'ray-worker', image: 'example.com/ray:1' }] },
    };
    await client.create(pod as KubeObject);
  }
  await c.prepare?.();
  if (c.ready) await writeStatus(c.ready);
  await waitFor(`${c.provider}: model Ready`, async () => status(await model(name())).phase === 'Ready', { timeoutMs: 120_000 });
  expect(condition(await model(name()), 'ModelServing')?.status).toBe('True');
  if (c.failed) {
    // Read back by the operator's poll of a Ready model's provider resource (NLS_PROVIDER_POLL_SECONDS).
    await writeStatus(c.failed.status);
    try {
      await waitFor(`${c.provider}: failure reported`, async () => (condition(await model(name()), 'ModelServing')?.message ?? '').includes(c.failed!.message), { timeoutMs: 120_000 });
    } catch (err) {
      // What the model says and what the operator did with it, for a failure seen only under load.
      const lines = operator.lines.filter((l) => l.includes(name())).slice(-15);
      throw new Error(`${(err as Error).message}\nstatus: ${JSON.stringify(status(await model(name())))}\noperator lines about ${name()}:\n${lines.join('\n')}`);
    }
    expect(status(await model(name())).phase).not.toBe('Ready');
  }
}

async function deletionStep(c: ProviderCase): Promise<void> {
  const name = () => modelName(c);
  const s = status(await model(name()));
  const ref = objectRef(s.provider!.apiVersion!, s.provider!.resourceKind!, s.provider!.resourceName!, ns);
  const resource = (await client.get(ref))!;
  // The provider's controller keeps a finalizer until its cleanup is done.
  await client.mergePatch(ref, { metadata: { finalizers: ['example.com/provider-cleanup'] } });
  await client.delete((await model(name()))!);
  await waitFor(`${c.provider}: resource deleting`, async () => !!(await client.get(ref))?.metadata.deletionTimestamp, { timeoutMs: 60_000 });
  // Past the bound (NLS_CLEANUP_BLOCKED_SECONDS) the model says what holds it, and keeps waiting.
  await waitFor(`${c.provider}: CleanupBlocked`, async () => condition(await model(name()), 'CleanupBlocked') !== undefined, { timeoutMs: 60_000 });
  const deleting = await model(name());
  expect(condition(deleting, 'ProviderReady')).toMatchObject({ status: 'False', reason: 'ProviderFinalizerPending' });
  expect(condition(deleting, 'CleanupBlocked')).toMatchObject({ status: 'True', reason: 'ForeignFinalizer' });
  expect(condition(deleting, 'CleanupBlocked')!.message).toContain(`${s.provider!.resourceKind} ${ns}/${s.provider!.resourceName} to go; it is being deleted but held by finalizer example.com/provider-cleanup`);
  expect((await client.get(ref))!.metadata.finalizers).toEqual(['example.com/provider-cleanup']); // never removed by the operator
  await client.mergePatch(ref, { metadata: { finalizers: null } });
  await waitFor(`${c.provider}: model gone`, async () => (await model(name())) === undefined, { timeoutMs: 90_000 });
  expect(await client.get(ref)).toBeUndefined();
  expect(resource.metadata.uid).toBeDefined();
}

// Provider statuses, as each provider's controller writes them.
const at = '2026-12-01T10:00:00Z';
const meta = (o: KubeObject) => o.metadata as { name: string; generation?: number };

function READY_KAITO() {
  return () => ({
    conditions: [
      { type: 'ResourceReady', status: 'True', reason: 'workspaceResourceStatusSuccess', message: 'workspace resource is ready', lastTransitionTime: at },
      { type: 'InferenceReady', status: 'True', reason: 'WorkspaceInferenceStatusSuccess', message: 'Inference has been deployed successfully', lastTransitionTime: at },
      { type: 'WorkspaceSucceeded', status: 'True', reason: 'workspaceSucceeded', message: 'workspace succeeds', lastTransitionTime: at },
    ],
  });
}
function FAILED_KAITO() {
  return {
    status: (o: KubeObject) => ({
      conditions: [
        { type: 'ResourceReady', status: 'True', reason: 'workspaceResourceStatusSuccess', message: 'workspace resource is ready', lastTransitionTime: at },
        { type: 'InferenceReady', status: 'False', reason: 'WorkspaceInferenceStatusFailed', message: `statefulset ${meta(o).name} did not become ready within 30m0s`, lastTransitionTime: at },
      ],
    }),
    message: 'did not become ready within 30m0s',
  };
}
function dynamoStatus(o: KubeObject, ok: boolean) {
  const name = meta(o).name;
  return {
    state: ok ? 'successful' : 'failed',
    observedGeneration: meta(o).generation,
    conditions: [
      {
        type: 'Ready',
        status: ok ? 'True' : 'False',
        reason: ok ? 'all_resources_are_ready' : 'some_resources_are_not_ready',
        message: ok ? 'All resources are ready' : `Resources not ready: ${name}-vllmworker: 0/2 replicas ready`,
        lastTransitionTime: at,
        observedGeneration: meta(o).generation,
      },
    ],
    services: {
      Frontend: { componentKind: 'Deployment', componentName: `${name}-frontend`, componentNames: [`${name}-frontend`], replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
      VllmWorker: { componentKind: 'Deployment', componentName: `${name}-vllmworker`, componentNames: [`${name}-vllmworker`], replicas: 2, updatedReplicas: 2, readyReplicas: ok ? 2 : 0, availableReplicas: ok ? 2 : 0 },
    },
  };
}
function READY_DYNAMO() {
  return (o: KubeObject) => dynamoStatus(o, true);
}
function FAILED_DYNAMO() {
  return { status: (o: KubeObject) => dynamoStatus(o, false), message: 'replicas ready' };
}
/** Deep equality regardless of key order (the API server returns object keys sorted). */
function sameJson(a: unknown, b: unknown): boolean {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(canonical) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => x.localeCompare(y)).map(([k, x]) => [k, canonical(x)])) : v;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function READY_KUBERAY() {
  return (o: KubeObject) => ({
    conditions: [
      { type: 'Ready', status: 'True', reason: 'NonZeroServeEndpoints', message: 'Number of serve endpoints is greater than 0', lastTransitionTime: at, observedGeneration: meta(o).generation },
      { type: 'UpgradeInProgress', status: 'False', reason: 'NoPendingCluster', message: 'Active Ray cluster exists and no pending Ray cluster', lastTransitionTime: at, observedGeneration: meta(o).generation },
    ],
    serviceStatus: 'Running',
    numServeEndpoints: 1,
    observedGeneration: meta(o).generation,
    activeServiceStatus: {
      rayClusterName: `${meta(o).name}-x7k2p`,
      applicationStatuses: { llm: { status: 'RUNNING', serveDeploymentStatuses: { OpenAiIngress: { status: 'HEALTHY' } } } },
    },
    pendingServiceStatus: {},
  });
}
function FAILED_KUBERAY() {
  return {
    status: (o: KubeObject) => ({
      conditions: [{ type: 'Ready', status: 'False', reason: 'ValidationFailed', message: 'The RayService spec is invalid: serveConfigV2 cannot be parsed', lastTransitionTime: at, observedGeneration: meta(o).generation }],
      serviceStatus: 'Running',
      observedGeneration: meta(o).generation,
    }),
    message: 'serveConfigV2 cannot be parsed',
  };
}

// Nothing written at steady state (issue 34): no watch lists an LLMModel's provider objects, so its
// pass (every NLS_PROVIDER_POLL_SECONDS here, every minute by default) reads each one and writes
// none that is stored as it would apply it, the kinds without a generation (ConfigMap, Service,
// ServiceAccount, Role, RoleBinding) included; an object edited by hand is still put back.
it('a converged llm-d model with monitoring writes nothing on its passes, and its provider objects edited by hand are put back', async () => {
  await installCRDs([path.join(upstreamCrdDir(), 'prometheus-operator', 'v0.93.0', 'monitoring.coreos.com_podmonitors.yaml')], plane.kubeConfig());
  const base = example('llmd.yaml');
  const name = 'steady-llmd';
  await applyObject({ ...base, metadata: { ...base.metadata, name } }, { kubeConfig: plane.kubeConfig(), fieldManager: 'user-manifests' });
  await waitFor(`${name}: provider objects and PodMonitor applied`, async () => {
    const stored = await model(name);
    return condition(stored, 'ProviderReady')?.status === 'True' && condition(stored, 'MonitoringReady')?.reason === 'Applied';
  }, { timeoutMs: 90_000 });
  const owned = async () => {
    const lists = await Promise.all(
      [['v1', 'ConfigMap'], ['v1', 'Service'], ['v1', 'ServiceAccount'], ['rbac.authorization.k8s.io/v1', 'Role'], ['rbac.authorization.k8s.io/v1', 'RoleBinding'], ['apps/v1', 'Deployment'], ['v1', 'PersistentVolumeClaim'], ['monitoring.coreos.com/v1', 'PodMonitor'], ['llm-d.ai/v1alpha2', 'InferenceObjective']].map(([v, k]) =>
        client.list(v, k, { namespace: ns }),
      ),
    );
    return lists.flatMap((l) => l.items).filter((o) => o.metadata.ownerReferences?.some((r) => r.kind === 'LLMModel' && r.name === name));
  };
  expect(new Set((await owned()).map((o) => o.kind))).toEqual(new Set(['ConfigMap', 'Service', 'ServiceAccount', 'Role', 'RoleBinding', 'Deployment', 'PersistentVolumeClaim', 'PodMonitor', 'InferenceObjective']));
  const passes = async () =>
    (await operator.metrics())
      .split('\n')
      .filter((l) => l.startsWith('nls_reconcile_total{') && l.includes('kind="LLMModel"'))
      .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
  // Let a pass that began before convergence finish, then count what three more passes write.
  const settled = (await passes()) + 1;
  await waitFor('one more pass', async () => (await passes()) >= settled, { timeoutMs: 30_000 });
  const before = await requestCounts(client);
  const from = await passes();
  await waitFor('three passes', async () => (await passes()) >= from + 3, { timeoutMs: 60_000 });
  // The resources the operator writes for a model (the control plane's own writes, to pods,
  // ReplicaSets, Leases, Events and status subresources of built-in kinds, are not counted).
  const ours = /^(APPLY|PATCH|POST|PUT|DELETE) (configmaps|services|serviceaccounts|roles|rolebindings|deployments|persistentvolumeclaims|podmonitors|inferenceobjectives|inferencepools|secrets|llmmodels|llmmodels\/status|aigatewayroutes|securitypolicies|backendtrafficpolicies)$/;
  const writes = Object.fromEntries([...diffCounts(before, await requestCounts(client))].filter(([key]) => ours.test(key)));
  expect(writes).toEqual({});

  // Edited by hand: a ConfigMap's data (no generation) and a Deployment's replicas (a spec field).
  const config = (await owned()).find((o) => o.kind === 'ConfigMap')!;
  const deployment = (await owned()).find((o) => o.kind === 'Deployment' && o.metadata.labels?.['llm.nebari.dev/role'] === 'serving')!;
  const replicas = (deployment.spec as { replicas: number }).replicas;
  await client.mergePatch(config, { data: Object.fromEntries(Object.keys((config as { data?: Record<string, string> }).data ?? {}).map((k) => [k, 'edited by hand'])) });
  await client.mergePatch(deployment, { spec: { replicas: replicas + 3 } });
  await waitFor('the hand edits put back', async () => {
    const now = await owned();
    const c = now.find((o) => o.metadata.name === config.metadata.name) as { data?: Record<string, string> } | undefined;
    const d = now.find((o) => o.kind === 'Deployment' && o.metadata.name === deployment.metadata.name) as { spec?: { replicas?: number } } | undefined;
    return JSON.stringify(c?.data) === JSON.stringify((config as { data?: Record<string, string> }).data) && d?.spec?.replicas === replicas;
  }, { timeoutMs: 30_000 });
  await client.delete(objectRef(GROUP, 'LLMModel', name, ns));
}, 180_000);
