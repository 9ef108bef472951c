// A custom build used the GitOps way, end to end on the real API server: `models.yaml` applied
// server-side under a GitOps tool's field manager passes the real webhooks unchanged, the
// operator serves every model (Ready), the operator writes nothing the file sets (only status and
// its finalizer), its derived objects are exactly the preview's and carry no GitOps tracking
// label, and re-applying the file (a self-heal) changes nothing. Its `values.yaml`, on top of the
// chart as the release packages it (image pinned by digest), keeps that pin, and `nls verify
// --images` fails a Deployment whose values moved the image off it.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { kubeConfig, kubeconfigPath, readManifests, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { type WebhookEnvironment, startWebhookEnvironment } from '../support/webhook/webhook-env';
import { KubeObject, KubeRest } from '../../src/kube/rest';
import { writeCustomBuild } from '../../src/cli/synth';
import { PREVIEW_FILE } from '../../src/chart/custom-build';
import { gatewayContextJson } from '../../constructs';
import { GATEWAY_OBJECT_KINDS } from '../../src/translate/gateway';
import { packageChart, releaseRefs } from '../../scripts/release/publish';
import { imageChecks } from '../../src/cli/lifecycle/verify-images';
import { defaultValues } from '../../src/chart/values-schema';
import { RELEASED_IMAGE_ANNOTATION } from '../../src/release-pin';
import { repoRoot, toolPaths } from '../support/tools';
import { OperatorProcess, installGatewayCRDs, installOwnCRDs, isReadyAtGeneration, providerCredential, startOperator } from './operator-support';

const admin = kubeConfig();
const GITOPS_MANAGER = 'argocd-controller';
const TRACKING_LABEL = 'app.kubernetes.io/instance';
const platform = { baseDomain: 'example.com', jwt: { issuer: 'https://keycloak.example.com/realms/nebari', audiences: ['nebari-llm'] } };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-gitops-'));
let env: WebhookEnvironment;
let operator: OperatorProcess;
let client: KubeRest;
let committed: KubeObject[];
let preview: KubeObject[];

/** What a user writes under `models:` (no defaults filled in; the tracking label as Argo CD's label tracking sets it). */
function buildConfig(namespace: string): unknown {
  const labels = { [TRACKING_LABEL]: 'llm-models' };
  return {
    release: { name: 'gitops', namespace },
    values: { platform },
    models: [
      {
        apiVersion: 'llm.nebari.dev/v1alpha1',
        kind: 'PassthroughModel',
        metadata: { name: 'openai', labels },
        spec: { provider: { hostname: 'api.openai.com', credentialSecretName: 'openai-credentials' }, models: { declared: ['gpt-4o'] }, access: { groups: ['ml-team'] } },
      },
      {
        apiVersion: 'llm.nebari.dev/v1alpha1',
        kind: 'PassthroughModel',
        metadata: { name: 'anthropic', labels },
        spec: { provider: { backend: { type: 'Anthropic' }, credentialSecretName: 'openai-credentials' }, models: { declared: ['claude-sonnet-4-5'] }, access: { public: true } },
      },
      {
        apiVersion: 'llm.nebari.dev/v1alpha1',
        kind: 'LLMModel',
        metadata: { name: 'qwen', labels },
        spec: {
          model: { name: 'Qwen/Qwen3-0.6B', source: 'huggingface', storage: { type: 'emptyDir' } },
          provider: { name: 'vllm' },
          resources: { gpu: { count: 1, type: 'nvidia' }, requests: { cpu: '100m', memory: '128Mi' } },
          access: { public: true },
        },
      },
    ],
  };
}

const get = (o: KubeObject) => client.get(o);
const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`;

/** Server-side apply of every committed object, as Argo CD's ServerSideApply=true sync does (no forced conflicts). */
async function syncModels(): Promise<KubeObject[]> {
  const stored: KubeObject[] = [];
  for (const o of committed) stored.push(await client.apply(o, { fieldManager: GITOPS_MANAGER, force: false }));
  return stored;
}

beforeAll(async () => {
  await installOwnCRDs();
  await installGatewayCRDs();
  client = new KubeRest(admin);
  env = await startWebhookEnvironment({ kubeConfig: admin, id: uniqueName('gitops') });
  const configFile = path.join(dir, 'build.yaml');
  fs.writeFileSync(configFile, stringify(buildConfig(env.operatorNamespace)));
  await writeCustomBuild(configFile, path.join(dir, 'out'), { preview: true });
  committed = readManifests(path.join(dir, 'out', 'models.yaml')) as KubeObject[];
  preview = readManifests(path.join(dir, 'out', PREVIEW_FILE)) as KubeObject[];
  await client.apply(providerCredential(env.operatorNamespace), { fieldManager: GITOPS_MANAGER });
  operator = startOperator({
    kubeconfigPath: kubeconfigPath(),
    namespace: env.operatorNamespace,
    name: 'gitops-operator',
    releaseName: env.id,
    env: { NLS_GATEWAY_CONTEXT: gatewayContextJson(platform) },
  });
});

afterAll(async () => {
  if (operator?.child.exitCode === null) await operator.kill();
  await env?.close();
  client?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('models.yaml holds only the model objects, in the release namespace; the derived objects are only in the preview', () => {
  expect(committed.map(key)).toEqual([`PassthroughModel/${env.operatorNamespace}/openai`, `PassthroughModel/${env.operatorNamespace}/anthropic`, `LLMModel/${env.operatorNamespace}/qwen`]);
  expect(preview.length).toBeGreaterThan(0);
  expect(preview.every((o) => GATEWAY_OBJECT_KINDS.some((k) => k.kind === o.kind && k.apiVersion === o.apiVersion))).toBe(true);
  expect(fs.readFileSync(path.join(dir, 'out', PREVIEW_FILE), 'utf8')).toContain('PREVIEW ONLY - DO NOT APPLY');
});

it('the applied models pass the real webhooks unchanged, and the operator serves each of them', async () => {
  env.calls.length = 0;
  const stored = await syncModels();
  expect(env.calls).toEqual(expect.arrayContaining(['/mutate-passthroughmodel', '/validate-passthroughmodel', '/mutate-llmmodel', '/validate-llmmodel']));
  // Already defaulted as the API server defaults: the mutating webhook has nothing left to change.
  stored.forEach((s, i) => expect(s.spec).toEqual(committed[i].spec));
  for (const o of committed) await waitFor(`${key(o)} Ready`, async () => isReadyAtGeneration(await get(o)), { timeoutMs: 120_000 });
}, 180_000);

it('the operator writes only status and its finalizer on the applied objects, and none of its objects carries the tracking label', async () => {
  for (const o of committed) {
    const live = (await get(o))!;
    const entries = (live.metadata.managedFields ?? []) as Array<{ manager: string; subresource?: string; fieldsV1?: Record<string, Record<string, unknown>> }>;
    expect(entries.some((e) => e.manager === GITOPS_MANAGER)).toBe(true);
    for (const e of entries.filter((m) => m.manager !== GITOPS_MANAGER)) {
      const fields = e.fieldsV1 ?? {};
      const touched = Object.keys(fields).flatMap((k) => (k === 'f:metadata' ? Object.keys(fields[k]).map((m) => `${k}.${m}`) : [k]));
      // Nothing the GitOps tool declares: spec, labels and annotations stay its own.
      expect({ object: key(o), manager: e.manager, touched: touched.filter((t) => t !== 'f:status' && t !== 'f:metadata.f:finalizers') }).toEqual({ object: key(o), manager: e.manager, touched: [] });
    }
  }
  const created: KubeObject[] = [];
  for (const { apiVersion, kind } of GATEWAY_OBJECT_KINDS) {
    created.push(...(await client.list(apiVersion, kind, { namespace: env.operatorNamespace, labelSelector: 'llm.nebari.dev/model' })).items);
  }
  // The preview is what the operator made, object for object; none of it is in models.yaml.
  expect(created.map(key).sort()).toEqual(preview.map(key).sort());
  expect(created.filter((o) => committed.some((c) => key(c) === key(o)))).toEqual([]);
  // The provider workloads and key Secrets too: nothing the operator makes looks like the Application's.
  const workloads: KubeObject[] = [];
  for (const [apiVersion, kind] of [['apps/v1', 'Deployment'], ['v1', 'Service'], ['v1', 'Secret'], ['v1', 'ConfigMap']]) {
    workloads.push(...(await client.list(apiVersion, kind, { namespace: env.operatorNamespace })).items);
  }
  expect(workloads.map(key)).toEqual(expect.arrayContaining([`Deployment/${env.operatorNamespace}/qwen-vllm`, `Secret/${env.operatorNamespace}/openai-api-keys`]));
  expect([...created, ...workloads].filter((o) => o.metadata.labels?.[TRACKING_LABEL] !== undefined).map(key)).toEqual([]);
  expect(created.every((o) => o.metadata.ownerReferences?.[0]?.controller === true)).toBe(true);
});

it('a self-heal re-applying models.yaml finds no conflict and changes nothing', async () => {
  // The GitOps manager's entry (with its timestamp) and the generation stay as they were: the apply was a no-op.
  const mark = (o: KubeObject) => ({ generation: o.metadata.generation, gitops: (o.metadata.managedFields as Array<{ manager: string }>).find((m) => m.manager === GITOPS_MANAGER) });
  const before = await Promise.all(committed.map(async (o) => mark((await get(o))!)));
  const after = await syncModels();
  expect(after.map(mark)).toEqual(before);
  for (const o of committed) expect(isReadyAtGeneration(await get(o))).toBe(true);
});

it('values.yaml on top of the released chart keeps its signed image pin; values that unpin it fail nls verify --images', async () => {
  const tools = toolPaths();
  const refs = releaseRefs('oci://127.0.0.1:5000/nebari', true);
  const digest = `sha256:${'c'.repeat(64)}`;
  // The chart as scripts/release packages it: operator.image pinned by digest, and recorded in Chart.yaml.
  const tgz = packageChart({ crane: tools.crane, cosign: tools.cosign, helm3: tools.helm3, helm4: tools.helm4 }, path.join(repoRoot, 'charts', 'nebari-llm-serving'), refs, digest, path.join(dir, 'released'));
  // Rendered for the test's API server, as Helm renders for the cluster it installs into.
  const { gitVersion } = await client.request<{ gitVersion: string }>('GET', '/version');
  const operatorDeployment = (valuesFile: string) => {
    const rendered = execFileSync(tools.helm3, ['template', 'gitops', tgz, '-n', env.operatorNamespace, '--kube-version', gitVersion, '-f', valuesFile], { encoding: 'utf8' });
    const objects = parseAllDocuments(rendered).map((d) => d.toJS() as KubeObject | null);
    return objects.find((o) => o?.kind === 'Deployment' && o.metadata.name.endsWith('-operator')) as KubeObject & {
      metadata: { annotations: Record<string, string>; labels: Record<string, string> };
      spec: { template: { spec: { containers: { name: string; image: string }[] } } };
    };
  };
  const pinned = `${refs.imageRepository}@${digest}`;
  const deployment = operatorDeployment(path.join(dir, 'out', 'values.yaml'));
  expect(deployment.spec.template.spec.containers[0].image).toBe(pinned);
  expect(deployment.metadata.annotations[RELEASED_IMAGE_ANNOTATION]).toBe(pinned);

  // A values file with every default of a checkout (what custom builds wrote before): the pin is gone, and verify says so.
  const allDefaults = path.join(dir, 'all-defaults.yaml');
  fs.writeFileSync(allDefaults, stringify({ ...defaultValues(), platform }));
  const unpinned = operatorDeployment(allDefaults);
  const image = unpinned.spec.template.spec.containers[0].image;
  expect(image).toBe(`nebari/nebari-llm-serving:${unpinned.metadata.labels['app.kubernetes.io/version']}`);
  const pods = [{ name: 'operator-0', image, imageID: `docker.io/nebari/nebari-llm-serving@sha256:${'d'.repeat(64)}` }];
  const checks = imageChecks({ deployment: 'x/operator', labels: unpinned.metadata.labels, releasedImage: unpinned.metadata.annotations[RELEASED_IMAGE_ANNOTATION], image, pods });
  expect(checks.find((c) => c.check === 'released image')).toMatchObject({ result: 'fail', detail: expect.stringContaining(`the chart was released with ${pinned}, but the Deployment names ${image}`) });
});
