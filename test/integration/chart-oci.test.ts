// The chart through an OCI registry with real helm v3 and v4 against a real kube-apiserver:
// package -> push -> show -> install from OCI (two releases in two namespaces) -> apply the next
// version's crds/ server-side and wait Established -> helm upgrade to that version.
//
// Installing creates Service-based webhooks with failurePolicy Fail and no operator process behind
// them (there is no image in tests; kwok only simulates the pods, so `--wait` sees the rollout
// become ready), so writes of our kinds would be refused: this file only checks the installed
// objects, in a private control plane so no other test file is affected. Admission itself is
// tested by the webhook tests, which call the server by URL.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseDocument } from 'yaml';
import { applyObject, ControlPlane, getObject, helm, installCRDs, registryAddress, rest, startControlPlane } from '../support/cluster';
import { packageChart } from '../../src/cli/synth';
import { version } from '../../src/version';
import { toolPaths } from '../support/tools';
import { chartDir } from './chart-support';

const NEXT = `${version.replace(/-.*$/, '')}-next.1`;
const CHART = 'nebari-llm-serving';
const NEW_FIELD = 'testOnlyNote';

let plane: ControlPlane;
let kubeconfig: string;
let repo: string;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-oci-'));

async function ok(version: 3 | 4, args: string[]): Promise<string> {
  const r = await helm(version, args, { kubeconfig });
  if (r.code !== 0) throw new Error(`helm v${version} ${args.join(' ')} failed (${r.code}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** A copy of the chart as the next release: bumped version and a new optional LLMModel field. */
function nextChart(): string {
  const dir = path.join(tmp, 'next', CHART);
  fs.cpSync(chartDir, dir, { recursive: true });
  const chartYaml = path.join(dir, 'Chart.yaml');
  const chart = parseDocument(fs.readFileSync(chartYaml, 'utf8'));
  chart.set('version', NEXT);
  chart.set('appVersion', NEXT);
  fs.writeFileSync(chartYaml, chart.toString());
  const crdFile = path.join(dir, 'crds', 'llm.nebari.dev_llmmodels.yaml');
  const crd = parseDocument(fs.readFileSync(crdFile, 'utf8'));
  crd.setIn(['spec', 'versions', 0, 'schema', 'openAPIV3Schema', 'properties', 'spec', 'properties', NEW_FIELD], { type: 'string', description: 'A field only the test release has.' });
  fs.writeFileSync(crdFile, crd.toString());
  return dir;
}

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'cluster' });
  kubeconfig = plane.kubeconfigPath;
  repo = `oci://${registryAddress()}/charts-${Date.now().toString(36)}`;
}, 120000);

afterAll(async () => {
  await plane?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('chart through an OCI registry', () => {
  const figures: Record<string, string> = {};

  afterAll(() => console.log(`chart figures: ${JSON.stringify(figures, null, 2)}`));

  test('package, push and show', async () => {
    // The way `npm run synth` packages it (helm from the tool cache, into <root>/dist).
    const root = path.join(tmp, 'root');
    fs.cpSync(chartDir, path.join(root, 'charts', CHART), { recursive: true });
    const tgz = packageChart(toolPaths().helm3, root);
    expect(tgz).toBe(path.join(root, 'dist', `${CHART}-${version}.tgz`));
    figures.packagedChartBytes = String(fs.statSync(tgz).size);
    const largest = fs.readdirSync(path.join(chartDir, 'crds')).map((f) => [f, fs.statSync(path.join(chartDir, 'crds', f)).size] as const).sort((a, b) => b[1] - a[1])[0];
    figures.largestCrd = `${largest[0]} (${largest[1]} bytes)`;
    await ok(3, ['push', tgz, repo, '--plain-http']);
    for (const v of [3, 4] as const) {
      const shown = await ok(v, ['show', 'chart', `${repo}/${CHART}`, '--version', version, '--plain-http']);
      expect(shown).toMatch(new RegExp(`^version: ${version.replace(/\./g, '\\.')}$`, 'm'));
      expect(shown).toMatch(/artifacthub\.io\/crds/);
    }
  });

  test('install from OCI: helm 4 and helm 3 with default values into a namespace made by --create-namespace', async () => {
    // The documented install: Helm makes the namespace, the chart does not (namespace.create is
    // false by default: Helm 4 writes its release record there before creating chart objects).
    const defaults = ['--create-namespace', '--set', 'platform.baseDomain=example.com', '--wait', '--timeout', '3m'];
    await ok(4, ['install', 'alpha', `${repo}/${CHART}`, '--version', version, '--plain-http', '-n', 'llm-alpha', ...defaults]);
    await ok(3, ['install', 'beta', `${repo}/${CHART}`, '--version', version, '--plain-http', '-n', 'llm-beta', ...defaults]);
    // The opt-in chart-made namespace still works with Helm 4's --take-ownership. It enforces the
    // restricted Pod Security profile: --wait only succeeds if the operator pods are admitted under it.
    const restricted = path.join(tmp, 'restricted.yaml');
    fs.writeFileSync(restricted, 'namespace:\n  create: true\n  labels:\n    pod-security.kubernetes.io/enforce: restricted\n');
    await ok(4, ['install', 'gamma', `${repo}/${CHART}`, '--version', version, '--plain-http', '-n', 'llm-gamma', '--create-namespace', '--take-ownership', '-f', restricted, '--wait', '--timeout', '3m']);

    const kc = plane.kubeConfig();
    const ns = await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'llm-gamma' } }, kc);
    expect(ns.metadata.labels).toMatchObject({ 'nebari.dev/managed': 'true', 'pod-security.kubernetes.io/enforce': 'restricted' });
    expect(JSON.parse(await ok(4, ['get', 'values', 'alpha', '-n', 'llm-alpha', '-o', 'json']))).toEqual({ platform: { baseDomain: 'example.com' } });
    for (const namespace of ['llm-alpha', 'llm-beta', 'llm-gamma']) {
      const pods = (await rest(kc).list('v1', 'Pod', { namespace, labelSelector: 'app.kubernetes.io/component=operator' })).items;
      expect(pods).toHaveLength(1);
    }
    // ...and the profile is really enforced in llm-gamma: a root pod is refused.
    const rootPod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'root', namespace: 'llm-gamma' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    await expect(applyObject(rootPod, { kubeConfig: kc, dryRun: true })).rejects.toThrow(/violates PodSecurity "restricted/);
    for (const [release, namespace] of [['alpha', 'llm-alpha'], ['beta', 'llm-beta']]) {
      const list = JSON.parse(await ok(3, ['list', '-n', namespace, '-o', 'json']));
      expect(list).toEqual([expect.objectContaining({ name: release, status: 'deployed', chart: `${CHART}-${version}` })]);
      const deployment = await getObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `${release}-${CHART}-operator`, namespace } }, kc);
      expect(deployment.spec.template.spec.containers[0].env).toContainEqual({ name: 'NLS_RELEASE_NAME', value: release });
      for (const kind of ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']) {
        const suffix = kind.startsWith('Validating') ? 'validating' : 'mutating';
        const config = await getObject({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name: `${release}-${CHART}-${suffix}` } }, kc);
        expect(config.webhooks.map((w: { clientConfig: { service: { namespace: string } } }) => w.clientConfig.service.namespace)).toEqual([namespace, namespace, namespace]);
      }
    }
    // Helm installed our CRDs from crds/ on the first install.
    const crd = await getObject({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'llmmodels.llm.nebari.dev' } }, kc);
    expect(crd.status.conditions).toContainEqual(expect.objectContaining({ type: 'Established', status: 'True' }));

    const secret = await getObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sh.helm.release.v1.alpha.v1', namespace: 'llm-alpha' } }, kc);
    const bytes = Buffer.byteLength(secret.data.release, 'utf8');
    figures.releaseSecretBytes = `${bytes} of 1048576 (${((bytes / 1048576) * 100).toFixed(1)}%)`;
    expect(bytes).toBeLessThan(1048576 / 4);
  });

  test('upgrade: apply the next crds/ server-side, wait Established, then helm upgrade both releases', async () => {
    const dir = nextChart();
    await ok(3, ['package', dir, '--destination', tmp]);
    await ok(3, ['push', path.join(tmp, `${CHART}-${NEXT}.tgz`), repo, '--plain-http']);
    expect(await ok(4, ['show', 'chart', `${repo}/${CHART}`, '--version', NEXT, '--plain-http'])).toContain(`version: ${NEXT}`);

    // Helm never upgrades crds/; apply them first, as `nls crds apply` does.
    await installCRDs([path.join(dir, 'crds')], plane.kubeConfig());
    const kc = plane.kubeConfig();
    const crd = await getObject({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'llmmodels.llm.nebari.dev' } }, kc);
    expect(crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties[NEW_FIELD]).toMatchObject({ type: 'string' });

    // The operator injects the CA (its own field manager); upgrades must leave it alone.
    const caBundle = Buffer.from('-----BEGIN CERTIFICATE-----\ninjected by the operator\n-----END CERTIFICATE-----\n').toString('base64');
    const configs = (release: string) => [
      { kind: 'ValidatingWebhookConfiguration', name: `${release}-${CHART}-validating`, entries: ['vllmmodel', 'vpassthroughmodel', 'vagentdeployment'] },
      { kind: 'MutatingWebhookConfiguration', name: `${release}-${CHART}-mutating`, entries: ['mllmmodel', 'mpassthroughmodel', 'magentdeployment'] },
    ];
    for (const release of ['alpha', 'beta']) {
      for (const c of configs(release)) {
        await applyObject(
          { apiVersion: 'admissionregistration.k8s.io/v1', kind: c.kind, metadata: { name: c.name }, webhooks: c.entries.map((e) => ({ name: `${e}.llm.nebari.dev`, clientConfig: { caBundle } })) },
          { kubeConfig: kc, fieldManager: 'nebari-llm-serving-operator', force: false },
        );
      }
    }

    await ok(4, ['upgrade', 'alpha', `${repo}/${CHART}`, '--version', NEXT, '--plain-http', '-n', 'llm-alpha', '--set', 'operator.replicas=2', '--wait', '--timeout', '3m']);
    await ok(3, ['upgrade', 'beta', `${repo}/${CHART}`, '--version', NEXT, '--plain-http', '-n', 'llm-beta', '--reuse-values']);
    for (const [release, namespace] of [['alpha', 'llm-alpha'], ['beta', 'llm-beta']]) {
      const list = JSON.parse(await ok(3, ['list', '-n', namespace, '-o', 'json']));
      expect(list).toEqual([expect.objectContaining({ name: release, status: 'deployed', revision: '2', chart: `${CHART}-${NEXT}` })]);
      const deployment = await getObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `${release}-${CHART}-operator`, namespace } }, kc);
      expect(deployment.metadata.labels['helm.sh/chart']).toBe(`${CHART}-${NEXT}`);
      expect(deployment.spec.template.spec.containers[0].image).toBe(`nebari/nebari-llm-serving:${NEXT}`);
    }
    // alpha went to two replicas: the rollout finished (kwok pods) and a PodDisruptionBudget exists.
    const alpha = await getObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `alpha-${CHART}-operator`, namespace: 'llm-alpha' } }, kc);
    expect(alpha.status).toMatchObject({ replicas: 2, readyReplicas: 2, updatedReplicas: 2 });
    expect(await getObject({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: `alpha-${CHART}-operator`, namespace: 'llm-alpha' } }, kc)).toBeDefined();
    for (const release of ['alpha', 'beta']) {
      for (const c of configs(release)) {
        const stored = await getObject({ apiVersion: 'admissionregistration.k8s.io/v1', kind: c.kind, metadata: { name: c.name } }, kc);
        expect(stored.webhooks.map((w: { clientConfig: { caBundle?: string } }) => w.clientConfig.caBundle)).toEqual([caBundle, caBundle, caBundle]);
      }
    }
    // beta kept its values.
    const values = JSON.parse(await ok(3, ['get', 'values', 'beta', '-n', 'llm-beta', '-o', 'json']));
    expect(values).toEqual({ platform: { baseDomain: 'example.com' } });
  });
});
