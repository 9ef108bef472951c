// `nls gateway roll-dataplane` on a private control plane in cluster mode: the real
// kube-controller-manager rolls Deployments and kwok runs their pods, with the released Envoy
// Gateway 1.8.1 and Gateway API 1.5.1 CRDs.
//
// DISCLOSED STAND-IN: no Envoy Gateway controller runs here (its Envoy proxy cannot be built on
// this machine). test/support/envoy-gateway-standin.ts does the one thing of Envoy Gateway this
// command relies on: it copies the EnvoyProxy's envoyDeployment.pod.annotations into the pod
// template of the data-plane Deployment (created here with Envoy Gateway's labels, as Envoy
// Gateway creates it). Everything after that (new ReplicaSet, new pods Ready, old pods deleted) is
// the real controller-manager and kwok, and the command waits for exactly that.
import * as path from 'path';
import type * as k8s from '@kubernetes/client-node';
import { applyObject, getObject, installCRDs, startControlPlane, upstreamCrdDir, type ControlPlane } from '../support/cluster';
import { startEnvoyGatewayStandIn, STANDIN_FIELD_MANAGER } from '../support/envoy-gateway-standin';
import { waitFor } from '../support/processes';
import { ROLL_FIELD_MANAGER, ROLLOUT_ANNOTATION, runGatewayRollDataplane } from '../../src/cli/gateway/gateway-roll-dataplane';
import { KubeRest, type KubeObject } from '../../src/kube/rest';

const GW_NS = 'envoy-gateway-system';
const GATEWAY = 'nebari-gateway';
const DEPLOYMENT = 'envoy-envoy-gateway-system-nebari-gateway-5f3a9c1e';
const EG_LABELS = {
  'app.kubernetes.io/name': 'envoy',
  'app.kubernetes.io/component': 'proxy',
  'app.kubernetes.io/managed-by': 'envoy-gateway',
  'gateway.envoyproxy.io/owning-gateway-name': GATEWAY,
  'gateway.envoyproxy.io/owning-gateway-namespace': GW_NS,
};

let plane: ControlPlane;
let kc: k8s.KubeConfig;
let client: KubeRest;

type Pod = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };
const pods = async () => (await client.list<Pod>('v1', 'Pod', { namespace: GW_NS, labelSelector: 'gateway.envoyproxy.io/owning-gateway-name=' + GATEWAY })).items;
const ready = (p: Pod) => !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

async function cli(args: string[]): Promise<{ code: number; output: string }> {
  const lines: string[] = [];
  const code = await runGatewayRollDataplane([...args, '--kubeconfig', plane.kubeconfigPath], (l) => lines.push(l));
  return { code, output: lines.join('\n') };
}

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'cluster', nodes: 1 });
  kc = plane.kubeConfig();
  client = new KubeRest(kc);
  await installCRDs([path.join(upstreamCrdDir(), 'gateway-api/v1.5.1/standard'), path.join(upstreamCrdDir(), 'envoy-gateway/v1.8.1')], kc);
  const apply = (o: object) => applyObject(o, { kubeConfig: kc });
  await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: GW_NS } });
  await apply({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'eg' }, spec: { controllerName: 'gateway.envoyproxy.io/gatewayclass-controller' } });
  await apply({ apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'EnvoyProxy', metadata: { name: 'proxy', namespace: GW_NS }, spec: { provider: { type: 'Kubernetes', kubernetes: { envoyDeployment: { pod: { annotations: { 'example.com/keep': 'yes' } } } } } } });
  const listeners = [{ name: 'http', protocol: 'HTTP', port: 80 }];
  await apply({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: GATEWAY, namespace: GW_NS }, spec: { gatewayClassName: 'eg', listeners, infrastructure: { parametersRef: { group: 'gateway.envoyproxy.io', kind: 'EnvoyProxy', name: 'proxy' } } } });
  await apply({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'bare', namespace: GW_NS }, spec: { gatewayClassName: 'eg', listeners } });
  // The data-plane Deployment as Envoy Gateway generates it (labels, selector), two replicas.
  await applyObject(
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: DEPLOYMENT, namespace: GW_NS, labels: EG_LABELS },
      spec: {
        replicas: 2,
        selector: { matchLabels: EG_LABELS },
        template: { metadata: { labels: EG_LABELS, annotations: { 'example.com/keep': 'yes' } }, spec: { containers: [{ name: 'envoy', image: 'example.invalid/envoy:v1.8.1' }] } },
      },
    },
    { kubeConfig: kc, fieldManager: STANDIN_FIELD_MANAGER },
  );
  await waitFor('two ready data-plane pods', async () => (await pods()).filter(ready).length === 2, { timeoutMs: 120_000 });
}, 240_000);

afterAll(async () => {
  client?.close();
  await plane?.stop();
});

test('without Envoy Gateway nothing copies the annotation: the command times out, says what it waits for, exit 4', async () => {
  const { code, output } = await cli(['--gateway', `${GW_NS}/${GATEWAY}`, '--timeout', '3s']);
  expect(code).toBe(4);
  expect(output).toContain('waiting for Envoy Gateway to copy the annotation into the pod template');
});

test('a Gateway without an EnvoyProxy is refused with the fix', async () => {
  const { code, output } = await cli(['--gateway', `${GW_NS}/bare`]);
  expect(code).toBe(1);
  expect(output).toMatch(/Gateway envoy-gateway-system\/bare has no EnvoyProxy .*spec\.infrastructure\.parametersRef/);
});

test('rolls the data plane through the EnvoyProxy annotation and waits for the real rollout', async () => {
  const standIn = startEnvoyGatewayStandIn(client);
  try {
    const before = (await pods()).map((p) => p.metadata.uid);
    const dry = await cli(['--gateway', `${GW_NS}/${GATEWAY}`, '--dry-run']);
    expect(dry.output).toContain(`Deployments ${GW_NS}/${DEPLOYMENT}`);

    const { code, output } = await cli(['--gateway', `${GW_NS}/${GATEWAY}`, '--timeout', '180s']);
    expect(output).toContain('Data plane rolled');
    expect(code).toBe(0);
    const proxy = await getObject({ apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'EnvoyProxy', metadata: { name: 'proxy', namespace: GW_NS } }, kc);
    const annotations = proxy.spec.provider.kubernetes.envoyDeployment.pod.annotations;
    expect(annotations['example.com/keep']).toBe('yes');
    const value = annotations[ROLLOUT_ANNOTATION];
    expect(Date.parse(value)).not.toBeNaN();
    // When it returned, every pod was new (the annotation's value) and Ready, and no old pod was left.
    const now = await pods();
    expect(now).toHaveLength(2);
    expect(now.every((p) => p.metadata.annotations?.[ROLLOUT_ANNOTATION] === value && ready(p))).toBe(true);
    expect(now.filter((p) => before.includes(p.metadata.uid))).toEqual([]);
    // The generated Deployment was written only by the (stand-in) Envoy Gateway, never by the command.
    const deployment = await getObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: DEPLOYMENT, namespace: GW_NS } }, kc);
    const managers = (deployment.metadata.managedFields as { manager: string }[]).map((f) => f.manager);
    expect(managers).not.toContain(ROLL_FIELD_MANAGER);
    expect(managers).toContain(STANDIN_FIELD_MANAGER);
  } finally {
    await standIn.stop();
  }
});
