// The committed chart with real helm v3 and v4 against a real kube-apiserver (a private control
// plane: the webhook configurations it installs must not reach other test files' objects):
// lint, render defaults and every ci/ value set, server-side apply every object with the upstream
// CRDs loaded and read it back unpruned, compare Helm's rendering with the plain rendering of the
// same values, and reject bad values naming the key. Helm renders for the API server's version
// (`--kube-version`), as it does against a cluster: run on every claimed minor by the version matrix.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseAllDocuments, stringify } from 'yaml';
import { applyObject, ControlPlane, getObject, helm, installCRDs, rest, startControlPlane, upstreamCrdDir } from '../support/cluster';
import { CI_VALUES } from '../../src/chart/ci-values';
import { mergeValues } from '../../src/chart/merge-values';
import { plainObjects } from '../../src/chart/render';
import { ChartValues, defaultValues } from '../../src/chart/values-schema';
import { chartDir, repoRoot } from './chart-support';
import { toolPaths } from '../support/tools';
import { PORTAL_REQUIRED } from '../../constructs/portal';
import { JWT_AUDIENCES_REQUIRED } from '../../constructs/helpers';


/**
 * The upstream CRDs the chart's optional objects need (cert-manager, Prometheus Operator, gateway
 * stack). The PrometheusRule CRD comes from the Prometheus Operator module the tools pin (the
 * same tag as the ServiceMonitor CRD), downloaded by scripts/build-tools.sh.
 */
function upstreamCrdPaths(): string[] {
  const up = upstreamCrdDir();
  return [
    path.join(up, 'cert-manager', 'v1.21.1'),
    path.join(up, 'prometheus-operator', 'v0.93.0', 'monitoring.coreos.com_servicemonitors.yaml'),
    toolPaths().prometheusRuleCrd,
    path.join(up, 'gateway-api', 'v1.5.1', 'standard'),
    path.join(up, 'envoy-gateway', 'v1.8.1'),
    path.join(up, 'envoy-ai-gateway', 'v1.1.0'),
  ];
}

/** Paths where `stored` lacks or changes something `sent` has (extra defaulted fields are fine). */
function prunedOrChanged(sent: unknown, stored: unknown, at = ''): string[] {
  if (Array.isArray(sent)) {
    if (!Array.isArray(stored) || stored.length !== sent.length) return [`${at}: sent ${JSON.stringify(sent)}, stored ${JSON.stringify(stored)}`];
    return sent.flatMap((x, i) => prunedOrChanged(x, stored[i], `${at}[${i}]`));
  }
  if (sent && typeof sent === 'object') {
    if (!stored || typeof stored !== 'object') return [`${at}: missing`];
    return Object.entries(sent).flatMap(([k, v]) => prunedOrChanged(v, (stored as Record<string, unknown>)[k], `${at}.${k}`));
  }
  return sent === stored ? [] : [`${at}: sent ${JSON.stringify(sent)}, stored ${JSON.stringify(stored)}`];
}

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> } } & Record<string, unknown>;

interface Variant { file: string; values: Record<string, unknown>; release?: string }
// Besides ci/: the naming branches of the helpers (overrides, a release name containing the chart name).
const EXTRA_VARIANTS: Variant[] = [
  { file: 'fullname-override', values: { fullnameOverride: 'llm' } },
  {
    file: 'name-override-existing-service-account',
    values: {
      nameOverride: 'serving',
      serviceAccount: { create: false, name: 'existing-sa' },
      gateway: { gatewayClass: { create: true, name: 'shared-eg' }, gateway: { create: true, name: 'gw', className: 'other-class' }, gatewayConfig: { create: true } },
    },
  },
  { file: 'release-contains-chart-name', values: {}, release: 'team-nebari-llm-serving' },
  // Host names as people write them: upper case and a trailing root dot, normalised where used.
  { file: 'host-names-as-written', values: { platform: { baseDomain: 'Example.COM.', external: { hostname: 'API.Example.com.' }, internal: { hostname: 'LLM-Internal.Example.COM' } } } },
];
const variants: Variant[] = [{ file: 'defaults', values: {} }, ...CI_VALUES.map((c) => ({ file: c.file, values: c.values })), ...EXTRA_VARIANTS];

function valuesFileOf(v: Variant): string[] {
  if (v.file === 'defaults') return [];
  const ci = path.join(chartDir, 'ci', v.file);
  if (fs.existsSync(ci)) return ['-f', ci];
  const file = path.join(tmp, `${v.file}.yaml`);
  fs.writeFileSync(file, stringify(v.values));
  return ['-f', file];
}

function docs(text: string): Obj[] {
  return parseAllDocuments(text).map((d) => d.toJS() as Obj).filter((o) => o && o.kind);
}

const key = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

function withoutHelmLabel(o: Obj): Obj {
  const copy = structuredClone(o);
  for (const labels of [copy.metadata.labels, (copy as { spec?: { template?: { metadata?: { labels?: Record<string, string> } } } }).spec?.template?.metadata?.labels]) {
    if (labels) delete labels['app.kubernetes.io/managed-by'];
  }
  return copy;
}

let plane: ControlPlane;
/** The API server's version: lint and render for it, as a user's helm does against the cluster. */
let kubeVersion: string;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nls-chart-'));

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'apiserver' });
  kubeVersion = (await rest(plane.kubeConfig()).request<{ gitVersion: string }>('GET', '/version')).gitVersion;
  await installCRDs([...upstreamCrdPaths(), path.join(repoRoot, 'crds')], plane.kubeConfig());
}, 180000);

afterAll(async () => {
  await plane?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe.each([3, 4] as const)('helm v%i', (version) => {
  test.each(variants.map((v, i) => [v.file, i] as const))('lint --strict is clean with %s', async (_file, index) => {
    const args = ['lint', '--strict', chartDir, '--kube-version', kubeVersion, ...valuesFileOf(variants[index])];
    const r = await helm(version, args);
    expect(`${r.stdout}${r.stderr}`).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(r.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
    expect(r.code).toBe(0);
  });
});

describe('rendered objects against the real API server', () => {
  test.each(variants.map((v, i) => [v.file, i] as const))('%s: every object is admitted, stored unpruned, and equals the plain rendering', async (_file, index) => {
    const variant = variants[index];
    const release = variant.release ?? `r${index}`;
    const namespace = `chart-${index}-${variant.file.replace(/-values\.yaml$/, '').replace(/[^a-z0-9-]/g, '-')}`.slice(0, 40).replace(/-+$/, '');
    const args = ['template', release, chartDir, '--namespace', namespace, '--kube-version', kubeVersion, ...valuesFileOf(variant)];
    const [v3, v4] = await Promise.all([helm(3, args), helm(4, args)]);
    expect(v3.stderr).toBe('');
    expect(v4.stderr).toBe('');
    const objects = docs(v4.stdout);
    // Same objects from both versions (their document order differs).
    expect(new Map(docs(v3.stdout).map((o) => [key(o), o]))).toEqual(new Map(objects.map((o) => [key(o), o])));

    // The same values rendered by the TS twins (deploy/ bundles and custom builds use them).
    const values = mergeValues(defaultValues(), variant.values) as ChartValues;
    const plain = (plainObjects(values, { releaseName: release, namespace }, true) as Obj[]).map((o) => [key(o), o] as const);
    const helmRendered = objects.map((o) => [key(o), withoutHelmLabel(o)] as const);
    expect(new Map(helmRendered)).toEqual(new Map(plain));

    // Namespace first, as Helm orders it; when the chart does not create it, the installer does.
    if (!variant.values.serviceAccount) expect(objects.some((o) => o.kind === 'ServiceAccount')).toBe(true);
    const ns = objects.find((o) => o.kind === 'Namespace');
    if (ns) {
      expect(ns.metadata.labels?.['nebari.dev/managed']).toBe('true');
      await applyObject(ns, { kubeConfig: plane.kubeConfig() });
    } else {
      await applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, { kubeConfig: plane.kubeConfig() });
    }
    // Namespaces named in watchNamespaces exist before the install, as the value's description says.
    for (const other of new Set(objects.map((o) => o.metadata.namespace).filter((n) => n && n !== namespace))) {
      await applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: other! } }, { kubeConfig: plane.kubeConfig() });
    }
    const problems: string[] = [];
    for (const o of objects.filter((x) => x.kind !== 'Namespace')) {
      const stored = await applyObject(o, { kubeConfig: plane.kubeConfig(), fieldManager: 'helm-template-test' });
      problems.push(...prunedOrChanged(o, stored, key(o)));
      const readBack = await getObject(o as never, plane.kubeConfig());
      problems.push(...prunedOrChanged(o, readBack, `${key(o)} (read back)`));
    }
    expect(problems).toEqual([]);
  });
});

describe('bad values are rejected by values.schema.json, naming the key', () => {
  // [case, values file content, the key as helm v3 prints it, as helm v4 prints it]
  const bad: Array<[string, Record<string, unknown>, RegExp, RegExp]> = [
    ['misspelt operator.replica', { operator: { replica: 2 } }, /operator: Additional property replica is not allowed/, /at '\/operator': additional properties 'replica' not allowed/],
    ['zero replicas', { operator: { replicas: 0 } }, /operator\.replicas/, /\/operator\/replicas/],
    ['unknown certificate mode', { webhook: { certificates: { mode: 'manual' } } }, /webhook\.certificates\.mode.*must be one of/, /\/webhook\/certificates\/mode.*must be one of/],
    ['digest that is not sha256', { operator: { image: { digest: 'latest' } } }, /operator\.image\.digest/, /\/operator\/image\/digest/],
    ['string for a boolean', { webhook: { upgradeGuard: { enabled: 'sure' } } }, /webhook\.upgradeGuard\.enabled/, /\/webhook\/upgradeGuard\/enabled/],
    ['plain-http OIDC issuer', { platform: { jwt: { issuer: 'http://keycloak' } } }, /platform\.jwt\.issuer/, /\/platform\/jwt\/issuer/],
    ['base domain with two trailing dots', { platform: { baseDomain: 'example.com..' } }, /platform\.baseDomain/, /\/platform\/baseDomain/],
    ['endpoint host name with an underscore', { platform: { internal: { hostname: 'llm_internal.example.com' } } }, /platform\.internal\.hostname/, /\/platform\/internal\/hostname/],
    ['unknown top-level key', { webhooks: { enabled: true } }, /Additional property webhooks is not allowed/, /additional properties 'webhooks' not allowed/],
    ['a label the chart sets itself', { commonLabels: { 'app.kubernetes.io/name': 'x' } }, /commonLabels: Property name of "app\.kubernetes\.io\/name"/, /invalid propertyName 'app\.kubernetes\.io\/name'/],
    ['pull secret without a name', { imagePullSecrets: [{ secret: 'x' }] }, /imagePullSecrets\.0/, /\/imagePullSecrets\/0/],
  ];
  test.each(bad)('%s', async (name, values, v3Message, v4Message) => {
    const file = path.join(tmp, `${name.replace(/\W+/g, '-')}.yaml`);
    fs.writeFileSync(file, stringify(values));
    for (const [version, message] of [[3, v3Message], [4, v4Message]] as const) {
      const r = await helm(version, ['template', 'bad', chartDir, '--kube-version', kubeVersion, '-f', file]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/values don't meet the specifications of the schema/);
      expect(r.stderr).toMatch(message);
    }
  });

  test('`--set operator.replica=2` fails on both versions', async () => {
    for (const version of [3, 4] as const) {
      const r = await helm(version, ['template', 'bad', chartDir, '--kube-version', kubeVersion, '--set', 'operator.replica=2']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/replica/);
    }
  });
});

describe('the internal endpoint\'s token audiences (issue 29, Medium 9)', () => {
  const issuer = ['--set', 'platform.baseDomain=example.com', '--set', 'platform.jwt.issuer=https://id.example.com/realms/nebari'];
  const gatewayContext = (stdout: string) => {
    const operator = docs(stdout).find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('-operator')) as unknown as { spec: { template: { spec: { containers: Array<{ env: Array<{ name: string; value?: string }> }> } } } };
    return JSON.parse(operator.spec.template.spec.containers[0].env.find((e) => e.name === 'NLS_GATEWAY_CONTEXT')!.value!);
  };

  test('helm with platform.jwt.issuer but no platform.jwt.audiences fails, naming the value and the opt-out', async () => {
    for (const version of [3, 4] as const) {
      const r = await helm(version, ['template', `aud-${version}`, chartDir, '--kube-version', kubeVersion, ...issuer]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(JWT_AUDIENCES_REQUIRED);
    }
  });

  test('audiences, or the explicit allowAnyAudience, reach the operator', async () => {
    for (const version of [3, 4] as const) {
      const set = await helm(version, ['template', `aud-${version}`, chartDir, '--kube-version', kubeVersion, ...issuer, '--set', 'platform.jwt.audiences={nebari-llm,cli}']);
      expect(set.code).toBe(0);
      expect(gatewayContext(set.stdout).jwt).toEqual({ issuer: 'https://id.example.com/realms/nebari', audiences: ['nebari-llm', 'cli'], groupsClaim: 'groups' });
      const any = await helm(version, ['template', `aud-${version}`, chartDir, '--kube-version', kubeVersion, ...issuer, '--set', 'platform.jwt.allowAnyAudience=true']);
      expect(any.code).toBe(0);
      expect(gatewayContext(any.stdout).jwt).toEqual({ issuer: 'https://id.example.com/realms/nebari', allowAnyAudience: true, groupsClaim: 'groups' });
    }
  });
});

describe('the webhook port answers only the API server, when told how to recognise it (issue 29, Low)', () => {
  test('webhook.clientCA reaches the operator and networkPolicy.webhookFrom limits the webhook port', async () => {
    const caFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'client-ca-')), 'ca.pem');
    const pem = '-----BEGIN CERTIFICATE-----\nMIIBdummy\n-----END CERTIFICATE-----\n';
    fs.writeFileSync(caFile, pem);
    for (const version of [3, 4] as const) {
      const r = await helm(version, ['template', `wh-${version}`, chartDir, '--kube-version', kubeVersion, '--set-file', `webhook.clientCA=${caFile}`, '--set', 'networkPolicy.webhookFrom[0].ipBlock.cidr=10.0.0.0/24']);
      expect(r.code).toBe(0);
      const objects = docs(r.stdout);
      const operator = objects.find((o) => o.kind === 'Deployment' && o.metadata.name.endsWith('-operator')) as unknown as { spec: { template: { spec: { containers: Array<{ env: Array<{ name: string; value?: string }> }> } } } };
      expect(operator.spec.template.spec.containers[0].env.find((e) => e.name === 'NLS_WEBHOOK_CLIENT_CA')?.value).toBe(pem);
      const policy = objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name.endsWith('-operator')) as unknown as { spec: { ingress: Array<{ ports: Array<{ port: number }>; from?: unknown }> } };
      expect(policy.spec.ingress.find((i) => i.ports[0].port === 9443)?.from).toEqual([{ ipBlock: { cidr: '10.0.0.0/24' } }]);
    }
  });
});

describe('the key portal', () => {
  const portalSet = ['--set', 'portal.enabled=true', '--set', 'platform.baseDomain=example.com', '--set', 'platform.jwt.issuer=https://id.example.com/realms/nebari', '--set', 'platform.jwt.audiences={nebari-llm}', '--set', 'portal.oidc.clientId=llm-keys'];
  const without = (key: string) => {
    const i = portalSet.findIndex((a) => a.startsWith(`${key}=`));
    return [...portalSet.slice(0, i - 1), ...portalSet.slice(i + 1)];
  };

  test.each([
    ['platform.jwt.issuer', PORTAL_REQUIRED.issuer],
    ['portal.oidc.clientId', PORTAL_REQUIRED.clientId],
    ['platform.baseDomain', PORTAL_REQUIRED.hostname],
  ])('helm with portal.enabled but no %s fails, naming the value to set', async (missing, message) => {
    for (const version of [3, 4] as const) {
      const r = await helm(version, ['template', `no-${version}`, chartDir, '-n', 'portal-missing', '--kube-version', kubeVersion, ...without(missing)]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(message);
    }
  });

  test('helm install creates the portal objects; the API server admits them (HTTPRoute by the Gateway API v1.5.1 CRD), they read back unpruned, and RBAC grants exactly the portal\'s rights', async () => {
    const namespace = 'portal-install';
    await applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, { kubeConfig: plane.kubeConfig() });
    const args = ['portal', chartDir, '-n', namespace, '-f', path.join(chartDir, 'ci', 'portal-values.yaml')];
    const rendered = docs((await helm(4, ['template', '--kube-version', kubeVersion, ...args])).stdout).filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'portal');
    // Two RoleBindings: to its own Role, and to the Role the operator keeps naming its Secrets.
    expect(rendered.map((o) => o.kind).sort()).toEqual(['Deployment', 'HTTPRoute', 'NetworkPolicy', 'PodDisruptionBudget', 'Role', 'RoleBinding', 'RoleBinding', 'Service', 'ServiceAccount', 'ServiceMonitor', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    // No hooks: the post-install webhook check needs a running operator, which this control plane has not.
    const r = await helm(4, ['install', ...args, '--no-hooks'], { kubeconfig: plane.kubeconfigPath });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const problems: string[] = [];
    for (const o of rendered) {
      const stored = await getObject(o as never, plane.kubeConfig());
      problems.push(...prunedOrChanged(o, stored, key(o)));
    }
    expect(problems).toEqual([]);

    // The API server's RBAC grants the portal's ServiceAccount the contract's rights, in the release namespace only.
    const user = `system:serviceaccount:${namespace}:portal-nebari-llm-serving-portal`;
    const allowed = async (verb: string, resource: string, group = '', ns: string | null = namespace) => {
      const review = await rest(plane.kubeConfig()).request<{ status: { allowed: boolean } }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`], resourceAttributes: { verb, resource, group, ...(ns ? { namespace: ns } : {}) } } },
      });
      return `${verb} ${group ? `${resource}.${group}` : resource}${ns === namespace ? '' : ` in ${ns ?? 'the cluster'}`}: ${review.status.allowed}`;
    };
    const checks = await Promise.all([
      allowed('get', 'llmmodels', 'llm.nebari.dev'),
      allowed('watch', 'llmmodels', 'llm.nebari.dev'),
      allowed('list', 'passthroughmodels', 'llm.nebari.dev'),
      allowed('update', 'llmmodels', 'llm.nebari.dev'),
      allowed('create', 'secrets'),
      // Issue 29, Medium 6: no Secret read or changed by kind (the operator names the ones it may).
      allowed('get', 'secrets'),
      allowed('list', 'secrets'),
      allowed('patch', 'secrets'),
      allowed('update', 'secrets'),
      allowed('delete', 'configmaps'),
      allowed('patch', 'events'),
      allowed('update', 'leases', 'coordination.k8s.io'),
      allowed('get', 'secrets', '', 'default'),
      allowed('list', 'secrets', '', null),
      allowed('create', 'pods'),
    ]);
    expect(checks).toEqual([
      'get llmmodels.llm.nebari.dev: true',
      'watch llmmodels.llm.nebari.dev: false',
      'list passthroughmodels.llm.nebari.dev: true',
      'update llmmodels.llm.nebari.dev: false',
      'create secrets: true',
      'get secrets: false',
      'list secrets: false',
      'patch secrets: false',
      'update secrets: false',
      'delete configmaps: false',
      'patch events: true',
      'update leases.coordination.k8s.io: true',
      'get secrets in default: false',
      'list secrets in the cluster: false',
      'create pods: false',
    ]);
    const uninstall = await helm(4, ['uninstall', 'portal', '-n', namespace, '--no-hooks'], { kubeconfig: plane.kubeconfigPath });
    expect(uninstall.code).toBe(0);
  });
});

describe('platform host names as people write them', () => {
  const values = { platform: { baseDomain: 'Example.COM.', external: { hostname: 'API.Example.com.' }, internal: { gatewayName: 'nebari-gateway' } } };
  const valuesFile = () => {
    const file = path.join(tmp, 'host-names.yaml');
    fs.writeFileSync(file, stringify(values));
    return file;
  };

  test.each([3, 4] as const)('helm v%i passes them to the operator lower-cased without the root dot', async (version) => {
    const r = await helm(version, ['template', 'hosts', chartDir, '--kube-version', kubeVersion, '-f', valuesFile()]);
    expect(r.stderr).toBe('');
    const deployment = docs(r.stdout).find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } } };
    const context = JSON.parse(deployment.spec.template.spec.containers[0].env.find((e) => e.name === 'NLS_GATEWAY_CONTEXT')!.value);
    expect({ baseDomain: context.baseDomain, external: context.external.hostname }).toEqual({ baseDomain: 'example.com', external: 'api.example.com' });
  });

  test.each([3, 4] as const)('helm v%i NOTES name the normalised endpoints and warn when both endpoints share a Gateway', async (version) => {
    // A server dry run: helm reads the API server's version (offline, helm 3.17 assumes 1.32, below the chart's kubeVersion).
    await applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'hosts' } }, { kubeConfig: plane.kubeConfig() });
    const r = await helm(version, ['install', 'hosts', chartDir, '--dry-run=server', '-n', 'hosts', '-f', valuesFile()], { kubeconfig: plane.kubeconfigPath });
    // Helm 4 warns on stderr that a dry run may render CRD-dependent objects inaccurately.
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.stdout).toContain('Endpoints: external https://api.example.com (API keys), internal https://llm-internal.example.com (OIDC)');
    expect(r.stdout).toContain('WARNING: platform.external and platform.internal attach to the same Gateway (envoy-gateway-system/nebari-gateway).');
    const separate = await helm(version, ['install', 'hosts', chartDir, '--dry-run=server', '-n', 'hosts', '--set', 'platform.baseDomain=example.com'], { kubeconfig: plane.kubeconfigPath });
    expect(separate.stdout).toContain('Endpoints: external https://llm.example.com');
    expect(separate.stdout).not.toContain('attach to the same Gateway');
  });
});

describe('deploy/ bundles for kubectl users, applied in the guarded-upgrade order', () => {
  const bundle = (name: string) => docs(fs.readFileSync(path.join(repoRoot, 'deploy', name), 'utf8'));
  const apply = async (objects: Obj[]) => {
    const problems: string[] = [];
    for (const o of objects) problems.push(...prunedOrChanged(o, await applyObject(o, { kubeConfig: plane.kubeConfig(), fieldManager: 'kubectl' }), key(o)));
    return problems;
  };
  const entries = async (kind: string, name: string) =>
    ((await getObject({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name } }, plane.kubeConfig())) as { webhooks: { name: string; clientConfig: { caBundle?: string } }[] } | undefined)?.webhooks;

  test('guard, then controller (no AgentDeployment routes), then activation; an injected caBundle survives re-applying', async () => {
    const controller = bundle('controller.yaml');
    expect(controller.some((o) => /\{\{/.test(JSON.stringify(o)))).toBe(false);
    expect(await apply(bundle('agentdeployment-webhook-guard.yaml'))).toEqual([]);
    expect((await entries('MutatingWebhookConfiguration', 'nebari-llm-serving-agentdeployment-guard'))?.map((w) => w.name)).toEqual(['agentdeployment-upgrade-guard.llm.nebari.dev']);

    const ns = controller.filter((o) => o.kind === 'Namespace');
    expect(await apply([...ns, ...controller.filter((o) => o.kind !== 'Namespace')])).toEqual([]);
    expect((await entries('ValidatingWebhookConfiguration', 'nebari-llm-serving-validating'))?.map((w) => w.name)).toEqual(['vllmmodel.llm.nebari.dev', 'vpassthroughmodel.llm.nebari.dev']);

    expect(await apply(bundle('agentdeployment-webhook.yaml'))).toEqual([]);
    const validating = await entries('ValidatingWebhookConfiguration', 'nebari-llm-serving-validating');
    expect(validating?.map((w) => w.name)).toEqual(['vllmmodel.llm.nebari.dev', 'vpassthroughmodel.llm.nebari.dev', 'vagentdeployment.llm.nebari.dev']);

    // The operator injects the CA with its own field manager; re-applying the bundles keeps it.
    const caBundle = Buffer.from('injected CA').toString('base64');
    await applyObject(
      { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'nebari-llm-serving-validating' }, webhooks: validating!.map((w) => ({ name: w.name, clientConfig: { caBundle } })) },
      { kubeConfig: plane.kubeConfig(), fieldManager: 'nebari-llm-serving-operator', force: false },
    );
    expect(await apply(bundle('agentdeployment-webhook.yaml'))).toEqual([]);
    expect((await entries('ValidatingWebhookConfiguration', 'nebari-llm-serving-validating'))?.map((w) => w.clientConfig.caBundle)).toEqual([caBundle, caBundle, caBundle]);
  });
});

describe('examples/argocd-application.yaml', () => {
  /** The Argo CD v3.5.1 Application CRD and the argocd namespace (idempotent). */
  const argoCd = async () => {
    await installCRDs([path.join(upstreamCrdPaths()[0], '..', '..', 'argo-cd', 'v3.5.1', 'application-crd.yaml')], plane.kubeConfig());
    await applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'argocd' } }, { kubeConfig: plane.kubeConfig() });
  };

  test('is admitted by the Argo CD v3.5.1 Application CRD and stored unpruned', async () => {
    const kc = plane.kubeConfig();
    await argoCd();
    const [app] = docs(fs.readFileSync(path.join(repoRoot, 'examples', 'argocd-application.yaml'), 'utf8'));
    expect(app.spec).toMatchObject({ source: { chart: 'nebari-llm-serving', targetRevision: JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version }, syncPolicy: { syncOptions: expect.arrayContaining(['ServerSideApply=true', 'CreateNamespace=true']) } });
    expect(app.metadata).toMatchObject({ annotations: { 'argocd.argoproj.io/sync-wave': expect.any(String) } });
    await applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: app.metadata.namespace! } }, { kubeConfig: kc });
    const stored = await applyObject(app, { kubeConfig: kc });
    expect(prunedOrChanged(app, stored, 'Application')).toEqual([]);
  });

  test('examples/argocd-gitops-application.yaml (chart, values and models from Git) is admitted and stored unpruned, and matches the plain example', async () => {
    const kc = plane.kubeConfig();
    await argoCd();
    const read = (file: string) => docs(fs.readFileSync(path.join(repoRoot, 'examples', file), 'utf8'))[0] as Obj & { spec: Record<string, unknown> };
    const plain = read('argocd-application.yaml');
    const gitops = read('argocd-gitops-application.yaml');
    const { source, ...plainRest } = plain.spec;
    const { sources, ...gitopsRest } = gitops.spec as { sources: Array<Record<string, unknown>> };
    // The same install, only the sources differ: the chart (with the committed values), the Git ref, the models directory.
    expect(gitopsRest).toEqual(plainRest);
    expect(sources[0]).toEqual({ ...(source as object), helm: { ...((source as { helm: object }).helm), valueFiles: ['$gitops/clusters/prod/nebari-llm-serving/values.yaml'] } });
    expect(sources.slice(1)).toEqual([expect.objectContaining({ ref: 'gitops' }), expect.objectContaining({ path: 'clusters/prod/nebari-llm-serving/models' })]);
    const stored = await applyObject({ ...gitops, metadata: { ...gitops.metadata, name: 'nebari-llm-serving-gitops' } }, { kubeConfig: kc });
    expect(prunedOrChanged(gitops.spec, stored.spec, 'Application.spec')).toEqual([]);
  });
});
