// Proves the test environment is real: a kube-apiserver that runs the upstream CRDs' CEL rules,
// RBAC that denies a plain user, kwok nodes that run pods, helm v3 and v4, and an OCI registry.
import * as k8s from '@kubernetes/client-node';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  applyObject,
  createNamespace,
  getObject,
  helm,
  installCRDs,
  kubeConfig,
  registryAddress,
  startControlPlane,
  uniqueName,
  upstreamCrdDir,
  userKubeConfig,
  type ControlPlane,
} from '../support/cluster';
import { readSharedState } from '../support/state';
import { waitFor } from '../support/processes';

const pinned = {
  aiGateway: 'envoy-ai-gateway/v1.1.0',
  envoyGateway: 'envoy-gateway/v1.8.1',
  gatewayApiStandard: 'gateway-api/v1.5.1/standard',
  gatewayApiExperimental: 'gateway-api/v1.5.1/experimental',
  inferenceExtension: 'gateway-api-inference-extension/v1.0.2',
};
const crdDir = (rel: string) => path.join(upstreamCrdDir(), rel);

describe('the shared control plane', () => {
  const ns = uniqueName('env');

  beforeAll(async () => {
    await createNamespace(ns);
  });

  it('is a kube-apiserver v1.35.4 reached over TLS with token authentication', async () => {
    const version = await kubeConfig().makeApiClient(k8s.VersionApi).getCode();
    console.log(`kube-apiserver ${version.gitVersion} (${version.platform}) at ${readSharedState().server}`);
    expect(version.gitVersion).toBe('v1.35.4');
    expect(readSharedState().server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('enforces RBAC: a user without grants cannot read Secrets', async () => {
    const alice = userKubeConfig('alice').makeApiClient(k8s.CoreV1Api);
    await expect(alice.listNamespacedSecret({ namespace: ns })).rejects.toMatchObject({ code: 403 });
  });

  it('runs in a network namespace with loopback only', () => {
    const interfaces = fs.readFileSync('/proc/net/dev', 'utf8').split('\n').slice(2).map((l) => l.split(':')[0].trim()).filter(Boolean);
    expect(interfaces).toEqual(['lo']);
  });

  it('installs every pinned upstream CRD (AI Gateway 1.1.0, Envoy Gateway 1.8.1, Gateway API 1.5.1 standard, Inference Extension 1.0.2) to Established', async () => {
    const names = await installCRDs([
      crdDir(pinned.gatewayApiStandard),
      crdDir(pinned.envoyGateway),
      crdDir(pinned.aiGateway),
      crdDir(pinned.inferenceExtension),
    ]);
    expect(names).toEqual(expect.arrayContaining([
      'aigatewayroutes.aigateway.envoyproxy.io',
      'aiservicebackends.aigateway.envoyproxy.io',
      'backendsecuritypolicies.aigateway.envoyproxy.io',
      'securitypolicies.gateway.envoyproxy.io',
      'backends.gateway.envoyproxy.io',
      'httproutes.gateway.networking.k8s.io',
      'backendtlspolicies.gateway.networking.k8s.io',
      'inferencepools.inference.networking.k8s.io',
    ]));
    console.log(`installed ${names.length} upstream CRDs`);
  });

  it('stores a valid v1beta1 AIGatewayRoute unchanged', async () => {
    const route = {
      apiVersion: 'aigateway.envoyproxy.io/v1beta1',
      kind: 'AIGatewayRoute',
      metadata: { name: 'smoke', namespace: ns },
      spec: {
        parentRefs: [{ name: 'gateway', kind: 'Gateway', group: 'gateway.networking.k8s.io' }],
        rules: [{
          name: 'gpt-4o',
          matches: [{ headers: [{ type: 'Exact', name: 'x-ai-eg-model', value: 'gpt-4o' }] }],
          backendRefs: [{ name: 'openai' }],
        }],
      },
    };
    await applyObject(route);
    const stored = await getObject(route);
    expect(stored.spec.parentRefs).toEqual(route.spec.parentRefs);
    expect(stored.spec.rules[0].name).toBe('gpt-4o');
    expect(stored.spec.rules[0].matches).toEqual(route.spec.rules[0].matches);
    expect(stored.spec.rules[0].backendRefs[0].name).toBe('openai');
  });

  it('runs the upstream CEL rules: an AIServiceBackend pointing at a plain Service is refused', async () => {
    const backend = {
      apiVersion: 'aigateway.envoyproxy.io/v1beta1',
      kind: 'AIServiceBackend',
      metadata: { name: 'service-backend', namespace: ns },
      spec: { schema: { name: 'OpenAI' }, backendRef: { name: 'my-service', kind: 'Service', group: '' } },
    };
    await expect(applyObject(backend)).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining('BackendRef must be a Backend resource of Envoy Gateway.'),
    });
    expect(await getObject(backend)).toBeUndefined();
  });

  it('schedules and runs a Deployment on kwok nodes in cluster mode', async () => {
    if (readSharedState().mode !== 'cluster') throw new Error('this suite expects NLS_TEST_MODE=cluster (the default)');
    const labels = { app: 'smoke' };
    await applyObject({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'smoke', namespace: ns },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'example/app:1' }] } },
      },
    });
    const apps = kubeConfig().makeApiClient(k8s.AppsV1Api);
    await waitFor('Deployment smoke available', async () => {
      const d = await apps.readNamespacedDeployment({ name: 'smoke', namespace: ns });
      return d.status?.availableReplicas === 2;
    }, { timeoutMs: 90000 });
  });
});

describe('a private control plane with the experimental Gateway API channel', () => {
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane({ mode: 'apiserver' });
  });
  afterAll(async () => {
    await plane?.stop();
  });

  it('installs Gateway API 1.5.1 experimental beside AI Gateway 1.1.0 and Envoy Gateway 1.8.1', async () => {
    const names = await installCRDs([
      crdDir(pinned.gatewayApiExperimental),
      crdDir(pinned.envoyGateway),
      crdDir(pinned.aiGateway),
      crdDir(pinned.inferenceExtension),
    ], plane.kubeConfig());
    expect(names).toEqual(expect.arrayContaining(['tcproutes.gateway.networking.k8s.io', 'aigatewayroutes.aigateway.envoyproxy.io']));
    const crd = await plane.kubeConfig().makeApiClient(k8s.ApiextensionsV1Api).readCustomResourceDefinition({ name: 'httproutes.gateway.networking.k8s.io' });
    expect(crd.metadata?.annotations?.['gateway.networking.k8s.io/channel']).toBe('experimental');
  });
});

describe('a private control plane\'s files after stop', () => {
  it('are removed, unless the plane was started to keep them (the e2e suite\'s NLS_E2E_KEEP)', async () => {
    const removed = await startControlPlane({ mode: 'apiserver', conversion: false });
    await removed.stop();
    expect(fs.existsSync(removed.dir)).toBe(false);
    const kept = await startControlPlane({ mode: 'apiserver', conversion: false, keepFiles: true });
    try {
      await kept.stop();
      // The logs of every component are still there to read.
      expect(fs.readdirSync(kept.dir)).toEqual(expect.arrayContaining(['kube-apiserver.log', 'etcd.log']));
    } finally {
      fs.rmSync(kept.dir, { recursive: true, force: true });
    }
  });
});

describe('helm and the OCI registry', () => {
  it.each([3, 4] as const)('helm v%i reports its version', async (v) => {
    const result = await helm(v, ['version', '--short']);
    console.log(`helm v${v}: ${result.stdout.trim()}`);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^v${v}\\.`));
  });

  it.each([3, 4] as const)('helm v%i packages a chart, pushes it to the registry and reads it back', async (v) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-smoke-chart-'));
    const chartDir = path.join(dir, `smoke-v${v}`);
    fs.mkdirSync(path.join(chartDir, 'templates'), { recursive: true });
    fs.writeFileSync(path.join(chartDir, 'Chart.yaml'), `apiVersion: v2\nname: smoke-v${v}\nversion: 0.1.${v}\ndescription: registry smoke test\n`);
    fs.writeFileSync(path.join(chartDir, 'templates', 'configmap.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n');
    try {
      const pkg = await helm(v, ['package', chartDir, '--destination', dir]);
      expect(pkg).toMatchObject({ code: 0 });
      const push = await helm(v, ['push', path.join(dir, `smoke-v${v}-0.1.${v}.tgz`), `oci://${registryAddress()}/charts`, '--plain-http']);
      expect(push.stderr + push.stdout).toContain('Pushed:');
      expect(push.code).toBe(0);
      const show = await helm(v, ['show', 'chart', `oci://${registryAddress()}/charts/smoke-v${v}`, '--version', `0.1.${v}`, '--plain-http']);
      expect(show.code).toBe(0);
      expect(show.stdout).toContain(`name: smoke-v${v}`);
      expect(show.stdout).toContain(`version: 0.1.${v}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
