// `nls preflight`, the preflight phase of `nls upgrade` and `nls verify --images`, against a
// private real API server (no controllers: the test writes the Deployments and Pods the checks
// read, and the pods' status as a kubelet would) with this project's CRDs and the released
// upstream Gateway API 1.5.1, Envoy Gateway 1.8.1, AI Gateway 1.1.0 and Argo CD 3.5.1 CRDs.
//
// What each test proves:
// - gateway: with no gateway stack the checks warn (missing) without blocking; an AI Gateway CRD
//   set that serves only v1alpha1 (the 0.5 shape) and an Envoy Gateway 1.7 controller block
//   (exit 3); the released CRDs and supported controllers are silent.
// - hostname: a PassthroughModel stored under an older CRD (without the hostname rules) stays after
//   the current CRDs are applied; preflight lists it with the field and the fix (text and JSON),
//   `nls upgrade` stops in its preflight phase with exit 3 and changes nothing, --ignore-preflight
//   goes on to the next phase; after the hostname is fixed preflight passes and the upgrade passes
//   its preflight phase.
// - verify --images: matching pod digests and Argo CD targetRevision pass; a pod on another digest
//   and an Application targeting another version fail, naming what disagrees.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { type ControlPlane, installCRDs, startControlPlane, upstreamCrdDir } from '../support/cluster';
import { toolPaths } from '../support/tools';
import { KubeRest } from '../../src/kube/rest';
import { runPreflight } from '../../src/cli/lifecycle/preflight';
import { runUpgrade } from '../../src/cli/lifecycle/upgrade';
import { runVerify } from '../../src/cli/lifecycle/verify';
import { version } from '../../src/version';

/* eslint-disable @typescript-eslint/no-explicit-any */

const NS = 'llm';
const RELEASE = 'nebari-llm-serving';
const root = path.resolve(__dirname, '../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-preflight-'));
const upstream = (rel: string) => path.join(upstreamCrdDir(), rel);
const DIGEST_A = `sha256:${'a1'.repeat(32)}`;
const DIGEST_B = `sha256:${'b2'.repeat(32)}`;
const IMAGE = `127.0.0.1:5000/nebari/nebari-llm-serving:${version}@${DIGEST_A}`;

let plane: ControlPlane;
let rest: KubeRest;

async function cli(run: (args: string[], out: (l: string) => void) => Promise<number>, args: string[]): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const code = await run([...args, '--kubeconfig', plane.kubeconfigPath], (l) => lines.push(l));
  return { code, output: lines.join('\n') };
}

const preflight = (...extra: string[]) => cli(runPreflight, ['--release', RELEASE, '--namespace', NS, ...extra]);
const upgrade = (...extra: string[]) => cli(runUpgrade, ['--chart', 'oci://127.0.0.1:9/none/nebari-llm-serving', '--version', version, '--release', RELEASE, '--namespace', NS, ...extra]);

function readYaml(file: string): any[] {
  return parseAllDocuments(fs.readFileSync(file, 'utf8')).map((d) => d.toJS()).filter((o) => o && typeof o === 'object');
}

/** Writes objects as a YAML stream for installCRDs. */
function writeCrds(name: string, objects: unknown[]): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, objects.map((o) => JSON.stringify(o)).join('\n---\n'));
  return file;
}

const model = (kind: string, name: string, spec: object) => ({ apiVersion: 'llm.nebari.dev/v1alpha1', kind, metadata: { name, namespace: NS }, spec });
const passthrough = (name: string, hostname: string) =>
  model('PassthroughModel', name, { provider: { hostname, credentialSecretName: 'provider-key' }, models: { declared: ['gpt-4.1'] }, access: { public: true } });

/** A Deployment as the upstream chart (or this chart) writes it; `selector` defaults to all `labels`. */
async function deployment(
  namespace: string,
  name: string,
  labels: Record<string, string>,
  image: string,
  opts: { container?: string; env?: { name: string; value: string }[]; selector?: Record<string, string> } = {},
): Promise<void> {
  await rest.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, { fieldManager: 'test' });
  const object = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: { selector: { matchLabels: opts.selector ?? labels }, template: { metadata: { labels }, spec: { containers: [{ name: opts.container ?? name, image, env: opts.env ?? [] }] } } },
  };
  await rest.apply(object as Parameters<KubeRest['apply']>[0], { fieldManager: 'test', force: true });
}

async function resourceVersions(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const plural of ['llmmodels', 'passthroughmodels', 'agentdeployments']) {
    const crd = await rest.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.llm.nebari.dev` } });
    out[plural] = (crd!.metadata as any).resourceVersion;
  }
  for (const kind of ['LLMModel', 'PassthroughModel', 'AgentDeployment']) {
    for (const o of (await rest.list('llm.nebari.dev/v1alpha1', kind, { namespace: NS })).items) out[`${kind}/${o.metadata.name}`] = (o.metadata as any).resourceVersion;
  }
  return out;
}

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'apiserver' });
  rest = new KubeRest(plane.kubeConfig());
  process.env.NLS_HELM = toolPaths().helm4;
  await rest.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }, { fieldManager: 'test' });
  // An older PassthroughModel CRD: the current one without the hostname rules (older webhooks and
  // CRDs admitted such names, seed 001). An object stored under it stays when the CRD tightens.
  const crds = ['agentdeployments', 'llmmodels', 'passthroughmodels'].map((p) => readYaml(path.join(root, 'crds', `llm.nebari.dev_${p}.yaml`))[0]);
  const older = JSON.parse(JSON.stringify(crds[2]));
  for (const version of older.spec.versions) delete version.schema.openAPIV3Schema.properties.spec.properties.provider.properties.hostname['x-kubernetes-validations'];
  await installCRDs([writeCrds('older.yaml', [crds[0], crds[1], older])], plane.kubeConfig());
  await rest.create(passthrough('legacy-provider', 'api_internal.example.com'));
  await installCRDs([path.join(root, 'crds')], plane.kubeConfig());
  await expect(rest.create(passthrough('new-provider', 'api_internal.example.com'))).rejects.toThrow(/spec\.provider\.hostname.*underscore/);
  await rest.create(model('LLMModel', 'qwen', { model: { name: 'Qwen/Qwen3-8B', source: 'huggingface' }, resources: { gpu: { count: 1 } }, access: { public: true } }));
  await rest.create(model('AgentDeployment', 'bot', { image: 'registry.example.com/bot:1', model: { modelRef: { kind: 'LLMModel', name: 'qwen' } } }));
  // The installation the commands find: the operator Deployment with the chart's labels and environment.
  const labels = { 'app.kubernetes.io/instance': RELEASE, 'app.kubernetes.io/component': 'operator', 'app.kubernetes.io/name': 'nebari-llm-serving' };
  await deployment(NS, `${RELEASE}-operator`, { ...labels, 'helm.sh/chart': `nebari-llm-serving-${version}`, 'app.kubernetes.io/version': version }, IMAGE, {
    container: 'operator',
    selector: labels,
    env: [
      { name: 'NLS_WEBHOOK_SERVICE', value: `${RELEASE}-webhook` },
      { name: 'NLS_WEBHOOK_SECRET', value: `${RELEASE}-webhook-server-cert` },
      { name: 'NLS_VALIDATING_WEBHOOK_CONFIGURATIONS', value: `${RELEASE}-validating` },
      { name: 'NLS_MUTATING_WEBHOOK_CONFIGURATIONS', value: `${RELEASE}-mutating` },
    ],
  });
}, 120_000);

afterAll(async () => {
  rest?.close();
  await plane?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('gateway stack versions', () => {
  test('a missing stack is warned about; v1alpha1-only AI Gateway CRDs and an old Envoy Gateway block; the released stack is silent', async () => {
    const missing = JSON.parse((await preflight('--output', 'json')).output);
    expect(missing.gateway.map((g: any) => `${g.severity} ${g.component}: ${g.message.split(':')[0]}`)).toEqual([
      'warning Gateway API CRDs: not installed',
      'warning Envoy Gateway CRDs: not installed',
      'warning Envoy Gateway controller: not found (looked for a Deployment labelled control-plane=envoy-gateway in every namespace)',
      'warning AI Gateway CRDs: not installed',
      'warning AI Gateway controller: not found (looked for a Deployment ai-gateway-controller in every namespace)',
    ]);

    // The AI Gateway 0.5 shape: the same kinds, served only as v1alpha1 (the storage version).
    const v1alpha1Only = fs.readdirSync(upstream('envoy-ai-gateway/v1.1.0')).flatMap((f) => readYaml(upstream(`envoy-ai-gateway/v1.1.0/${f}`)))
      .filter((crd) => crd.spec.versions.some((x: any) => x.name === 'v1beta1'))
      .map((crd) => ({ ...crd, spec: { ...crd.spec, versions: crd.spec.versions.filter((x: any) => x.name === 'v1alpha1').map((x: any) => ({ ...x, storage: true, deprecated: undefined, deprecationWarning: undefined })) } }));
    await installCRDs([writeCrds('ai-gateway-0.5-shape.yaml', v1alpha1Only), upstream('gateway-api/v1.5.1/standard'), upstream('envoy-gateway/v1.8.1')], plane.kubeConfig());
    await deployment('envoy-gateway-system', 'envoy-gateway', { 'control-plane': 'envoy-gateway' }, 'docker.io/envoyproxy/gateway:v1.7.0');
    await deployment('envoy-ai-gateway-system', 'ai-gateway-controller', { 'app.kubernetes.io/name': 'ai-gateway-helm' }, 'docker.io/envoyproxy/ai-gateway-controller:v0.5.0');
    const old = await preflight();
    expect(old.code).toBe(3);
    expect(old.output).toMatch(/ERROR AI Gateway CRDs: too old: .*aiservicebackends\.aigateway\.envoyproxy\.io.* do not serve v1beta1/);
    expect(old.output).toContain('ERROR Envoy Gateway controller: too old: envoy-gateway-system/envoy-gateway runs docker.io/envoyproxy/gateway:v1.7.0; this release needs 1.8.0 or newer');
    expect(old.output).toContain('ERROR AI Gateway controller: too old: envoy-ai-gateway-system/ai-gateway-controller runs docker.io/envoyproxy/ai-gateway-controller:v0.5.0');

    await installCRDs([upstream('envoy-ai-gateway/v1.1.0')], plane.kubeConfig());
    await deployment('envoy-gateway-system', 'envoy-gateway', { 'control-plane': 'envoy-gateway' }, 'docker.io/envoyproxy/gateway:v1.8.1');
    await deployment('envoy-ai-gateway-system', 'ai-gateway-controller', { 'app.kubernetes.io/name': 'ai-gateway-helm' }, 'docker.io/envoyproxy/ai-gateway-controller:v1.1.0');
    const current = JSON.parse((await preflight('--output', 'json')).output);
    expect(current.gateway).toEqual([]);
  }, 120_000);
});

describe('stored objects', () => {
  test('a stored invalid hostname is listed with the field and the fix, and blocks nls upgrade with nothing changed', async () => {
    const text = await preflight();
    expect(text.code).toBe(3);
    expect(text.output).toContain('stored objects: 3 checked with the admission of');
    expect(text.output).toMatch(/ERROR PassthroughModel llm\/legacy-provider: spec\.provider\.hostname: .*underscore/);
    expect(text.output).toContain('fix: correct spec.provider.hostname (kubectl edit passthroughmodel legacy-provider -n llm');
    const json = JSON.parse((await preflight('--output', 'json')).output);
    expect(json.blocked).toBe(true);
    expect(json.objects.findings).toEqual([expect.objectContaining({ kind: 'PassthroughModel', namespace: NS, name: 'legacy-provider', field: 'spec.provider.hostname' })]);

    const before = await resourceVersions();
    const refused = await upgrade();
    expect(refused.code).toBe(3);
    expect(refused.output).toMatch(/==> \[1\/8\] preflight/);
    expect(refused.output).toMatch(/!!! preflight refused after [\d.]+ s: preflight found problems/);
    expect(refused.output).toContain('Nothing was changed.');
    expect(refused.output).not.toContain('[2/8] check');
    expect(await resourceVersions()).toEqual(before);

    const ignored = await upgrade('--ignore-preflight');
    expect(ignored.output).toContain('going on because of --ignore-preflight');
    expect(ignored.output).toContain('==> [2/8] check');
  }, 60_000);

  test('after the hostname is fixed, preflight passes and nls upgrade gets past its preflight phase', async () => {
    await rest.mergePatch({ apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'PassthroughModel', metadata: { name: 'legacy-provider', namespace: NS } }, { spec: { provider: { hostname: 'api.internal.example.com' } } });
    const fixed = await preflight();
    expect(fixed.output).toContain(`preflight: nothing blocks the upgrade to ${version}`);
    expect(fixed.output).not.toMatch(/ERROR|warning/);
    expect(fixed.code).toBe(0);
    const upgraded = await upgrade();
    expect(upgraded.output).toMatch(/==> \[1\/8\] preflight[\s\S]*done in[\s\S]*==> \[2\/8\] check/);
  }, 60_000);

  test('--version of another release is refused, naming the nls to run', async () => {
    const other = await preflight('--version', '9.9.9');
    expect(other.code).toBe(2);
    expect(other.output).toContain(`this nls is ${version} and runs only the admission of ${version}; to check for 9.9.9, run the nls of 9.9.9`);
  });
});

describe('nls verify --images', () => {
  const pod = (name: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { 'app.kubernetes.io/instance': RELEASE, 'app.kubernetes.io/component': 'operator', 'app.kubernetes.io/name': 'nebari-llm-serving' } },
    spec: { containers: [{ name: 'operator', image: IMAGE }] },
  });
  /** The status a kubelet writes once the container runs `digest`. */
  const running = (name: string, digest: string) =>
    rest.mergePatch({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS } }, {
      status: { phase: 'Running', containerStatuses: [{ name: 'operator', image: IMAGE, imageID: `127.0.0.1:5000/nebari/nebari-llm-serving@${digest}`, ready: true, restartCount: 0, started: true, state: { running: { startedAt: new Date().toISOString() } } }] },
    }, { subresource: 'status' });
  const rows = async (...extra: string[]) => {
    const r = await cli(runVerify, ['--release', RELEASE, '--namespace', NS, '--images', '--output', 'json', ...extra]);
    return Object.fromEntries((JSON.parse(r.output) as { check: string; result: string; detail: string }[]).map((c) => [c.check, c]));
  };

  test('pods on the digest the chart values name pass; a pod on another digest fails, naming both', async () => {
    for (const name of ['operator-a', 'operator-b']) await rest.create(pod(name));
    await running('operator-a', DIGEST_A);
    await running('operator-b', DIGEST_A);
    const agree = await rows();
    expect(agree['release version']).toMatchObject({ result: 'pass', detail: expect.stringContaining(`chart nebari-llm-serving ${version}, appVersion ${version}`) });
    expect(agree['operator image']).toMatchObject({ result: 'pass' });
    expect(agree['operator pod images']).toEqual({ check: 'operator pod images', result: 'pass', detail: `2 pod(s) run ${DIGEST_A}, the digest the chart values name` });

    await running('operator-b', DIGEST_B);
    const disagree = await rows();
    expect(disagree['operator pod images'].result).toBe('fail');
    expect(disagree['operator pod images'].detail).toContain(`${DIGEST_A} (operator-a); ${DIGEST_B} (operator-b)`);
    expect(disagree['operator pod images'].detail).toContain('pin operator.image.digest');
    await running('operator-b', DIGEST_A);
  }, 60_000);

  test('the Argo CD Application target revision must be the version running', async () => {
    await installCRDs([upstream('argo-cd/v3.5.1/application-crd.yaml')], plane.kubeConfig());
    await rest.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'argocd' } }, { fieldManager: 'test' });
    const application = (targetRevision: string) => ({
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'llm-serving', namespace: 'argocd' },
      spec: {
        project: 'default',
        destination: { server: 'https://kubernetes.default.svc', namespace: NS },
        sources: [
          { repoURL: '127.0.0.1:5000/charts', chart: 'nebari-llm-serving', targetRevision },
          { repoURL: 'https://git.example.com/platform.git', targetRevision: 'main', ref: 'values' },
        ],
      },
    });
    await rest.apply(application(version), { fieldManager: 'test', force: true });
    expect((await rows('--argocd-application', 'argocd/llm-serving'))['Argo CD target revision']).toMatchObject({ result: 'pass' });

    await rest.apply(application('9.9.9'), { fieldManager: 'test', force: true });
    const behind = (await rows('--argocd-application', 'argocd/llm-serving'))['Argo CD target revision'];
    expect(behind.result).toBe('fail');
    expect(behind.detail).toContain(`wants nebari-llm-serving 9.9.9, but the cluster runs ${version}`);
    expect((await rows('--argocd-application', 'argocd/missing'))['Argo CD target revision'].detail).toContain('Application argocd/missing not found');
    const exit = await cli(runVerify, ['--release', RELEASE, '--namespace', NS, '--argocd-application', 'argocd/llm-serving']);
    expect(exit.code).toBe(5);
    expect(exit.output).toMatch(/Argo CD target revision\s+FAIL/);
  }, 60_000);
});
