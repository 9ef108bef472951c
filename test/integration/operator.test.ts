// The operator against the shared control plane (cluster mode: garbage collection runs), as a
// separate process: a PassthroughModel's objects appear, change and go; API keys survive
// re-apply, endpoint toggles and operator restarts and go only with the model; an endpoint's auth
// policy outlives its generated HTTPRoute; no secret value reaches logs, Events or status.
import { applyObject, deleteObject, getObject, kubeconfigPath, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { KubeRest, KubeObject } from '../../src/kube/rest';
import { mintKey, listKeys } from '../../src/api-keys/key-store';
import { runKeys } from '../../src/cli/keys/keys';
import {
  OperatorProcess,
  condition,
  isReadyAtGeneration,
  passthroughModel,
  prepareOperatorNamespace,
  providerCredential,
  startOperator,
} from './operator-support';

const ns = uniqueName('op-life');
const PTM = { apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'PassthroughModel' };
const ref = (apiVersion: string, kind: string, name: string) => ({ apiVersion, kind, metadata: { name, namespace: ns } });
const route = (name: string) => ref('aigateway.envoyproxy.io/v1beta1', 'AIGatewayRoute', name);
const policy = (name: string) => ref('gateway.envoyproxy.io/v1alpha1', 'SecurityPolicy', name);
const secret = (name: string) => ref('v1', 'Secret', name);
const configMap = (name: string) => ref('v1', 'ConfigMap', name);

let client: KubeRest;
let operator: OperatorProcess;
const operators: OperatorProcess[] = [];
const providerSecretValue = 'sk-provider-upstream-secret-value-0123456789';
const mintedKeys: string[] = [];

function start(name: string): OperatorProcess {
  operator = startOperator({ kubeconfigPath: kubeconfigPath(), namespace: ns, name });
  operators.push(operator);
  return operator;
}

async function model(name: string): Promise<KubeObject | undefined> {
  return getObject({ ...PTM, metadata: { name, namespace: ns } });
}

async function waitReady(name: string, timeoutMs = 60_000): Promise<KubeObject> {
  await waitFor(`PassthroughModel ${name} Ready at its generation`, async () => isReadyAtGeneration(await model(name)), { timeoutMs });
  return (await model(name))!;
}

beforeAll(async () => {
  client = await prepareOperatorNamespace(ns);
  start('operator-a');
});

afterAll(async () => {
  for (const op of operators) if (op.child.exitCode === null) await op.kill();
  client?.close();
});

describe('PassthroughModel lifecycle', () => {
  it('creates every gateway object, the key objects without owner references, and reports Ready', async () => {
    await applyObject(passthroughModel(ns, 'gpt'));
    const ready = await waitReady('gpt');
    expect(ready.metadata.finalizers).toContain('llm.nebari.dev/cleanup');
    for (const type of ['CredentialResolved', 'BackendConfigured', 'ExternalEndpointReady', 'InternalEndpointReady']) {
      expect(condition(ready, type)).toMatchObject({ status: 'True' });
    }
    expect(ready.status).toMatchObject({ endpoints: { external: 'https://llm.example.com/v1', internal: 'https://llm-internal.example.com/v1' } });
    const generated = [
      ref('gateway.envoyproxy.io/v1alpha1', 'Backend', 'gpt-backend'),
      ref('gateway.networking.k8s.io/v1', 'BackendTLSPolicy', 'gpt-backend-tls'),
      ref('aigateway.envoyproxy.io/v1beta1', 'AIServiceBackend', 'gpt'),
      ref('aigateway.envoyproxy.io/v1beta1', 'BackendSecurityPolicy', 'gpt-upstream-auth'),
      route('gpt-external'),
      route('gpt-internal'),
      policy('gpt-external-auth'),
      policy('gpt-internal-auth'),
    ];
    for (const r of generated) {
      const obj = await getObject<KubeObject>(r);
      expect({ kind: r.kind, owner: obj?.metadata.ownerReferences?.[0] }).toMatchObject({ kind: r.kind, owner: { kind: 'PassthroughModel', name: 'gpt', uid: ready.metadata.uid, controller: true } });
    }
    const keys = await getObject<KubeObject>(secret('gpt-api-keys'));
    const meta = await getObject<KubeObject>(configMap('gpt-api-key-metadata'));
    expect(keys?.metadata.ownerReferences).toBeUndefined();
    expect(meta?.metadata.ownerReferences).toBeUndefined();
  });

  it('mints a key with the CLI (printed once) and the external SecurityPolicy allows exactly the current keys', async () => {
    const out: string[] = [];
    const code = await runKeys(['mint', '--model', 'gpt', '--namespace', ns, '--user', 'alice', '--description', 'laptop', '--expires-in', '30d', '--tier', 'standard', '--kubeconfig', kubeconfigPath()], (l) => out.push(l));
    expect(code).toBe(0);
    const key = out[out.length - 1];
    expect(key).toMatch(/^sk-[A-Za-z0-9_-]{43}$/);
    mintedKeys.push(key);
    const clientId = /client ID: (\S+)/.exec(out.join('\n'))![1];
    await waitFor('the external SecurityPolicy to allow the new client ID', async () => JSON.stringify((await getObject(policy('gpt-external-auth')))?.spec).includes(clientId));

    const listed: string[] = [];
    await runKeys(['list', '--model', 'gpt', '--namespace', ns, '--kubeconfig', kubeconfigPath()], (l) => listed.push(l));
    expect(listed.join('\n')).toContain(clientId);
    expect(listed.join('\n')).toContain('laptop');
    expect(listed.join('\n')).not.toContain(key);
    // Expiry (30 days out), owner and tier are recorded and listed.
    const row = listed.find((l) => l.startsWith(clientId))!.split('\t');
    expect(row[1]).toBe('alice');
    expect(Date.parse(row[3]) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect(row[5]).toBe('standard');

    const second = await mintKey(client, { kind: 'PassthroughModel', name: 'gpt', namespace: ns }, 'bob');
    mintedKeys.push(second.apiKey);
    const revoked: string[] = [];
    expect(await runKeys(['revoke', '--model', 'gpt', '--namespace', ns, '--client-id', second.clientId, '--kubeconfig', kubeconfigPath()], (l) => revoked.push(l))).toBe(0);
    await waitFor('the revoked client ID to leave the SecurityPolicy', async () => {
      const spec = JSON.stringify((await getObject(policy('gpt-external-auth')))?.spec);
      return spec.includes(clientId) && !spec.includes(second.clientId);
    });
    // nls_api_key_info (docs/observability.md) describes the live key from its record and drops the revoked one.
    const liveKey = new RegExp(`\\nnls_api_key_info\\{client_id="${clientId}",namespace="${ns}",model="gpt",model_kind="PassthroughModel",owner="alice",groups="[^"]*",tier="standard",source="cli"\\} 1\\n`);
    await waitFor('nls_api_key_info to follow the keys', async () => {
      const text = await operator.metrics();
      return liveKey.test(text) && !text.includes(second.clientId);
    });

    // The audit log has the three writes, readable with `nls keys audit`, and no key.
    const audit: string[] = [];
    expect(await runKeys(['audit', '--model', 'gpt', '--namespace', ns, '--since', '1h', '--output', 'json', '--kubeconfig', kubeconfigPath()], (l) => audit.push(l))).toBe(0);
    const entries = JSON.parse(audit.join('\n')) as Array<{ action: string; clientId: string; owner: string; actor: string }>;
    expect(entries.map((e) => [e.action, e.clientId, e.owner])).toEqual([
      ['mint', clientId, 'alice'],
      ['mint', second.clientId, 'bob'],
      ['revoke', second.clientId, 'bob'],
    ]);
    expect(audit.join('\n')).not.toContain(key);
    const byUser: string[] = [];
    expect(await runKeys(['audit', '--user', 'alice', '--namespace', ns, '--kubeconfig', kubeconfigPath()], (l) => byUser.push(l))).toBe(0);
    expect(byUser).toHaveLength(2); // header + alice's mint
  });

  it('applies spec updates: a new declared model appears in the routes', async () => {
    await applyObject(passthroughModel(ns, 'gpt', { declared: ['gpt-4o', 'gpt-4.1'] }));
    await waitReady('gpt');
    for (const endpoint of ['external', 'internal']) {
      expect(JSON.stringify((await getObject(route(`gpt-${endpoint}`)))?.spec)).toContain('gpt-4.1');
    }
  });

  it('disables an endpoint route first; its auth policy stays until the generated HTTPRoute is gone; keys stay', async () => {
    // Stand in for the AI Gateway controller, which generates an HTTPRoute named like the route.
    await applyObject({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'gpt-external', namespace: ns },
      spec: { parentRefs: [{ name: 'nebari-gateway', namespace: 'envoy-gateway-system' }], rules: [{ backendRefs: [{ name: 'x', port: 80 }] }] },
    });
    const keysBefore = (await getObject<KubeObject & { data: Record<string, string> }>(secret('gpt-api-keys')))!.data;
    await applyObject(passthroughModel(ns, 'gpt', { declared: ['gpt-4o', 'gpt-4.1'], external: false }));
    await waitFor('the external AIGatewayRoute to be deleted', async () => (await getObject(route('gpt-external'))) === undefined);
    // The reconcile that deleted the route reports the policy as held back; it must still be there.
    await waitFor('ExternalEndpointReady to report the held-back policy', async () => {
      const c = condition(await model('gpt'), 'ExternalEndpointReady');
      return c?.reason === 'EndpointDisabled' && c.message.includes('once the generated HTTPRoute is gone');
    });
    expect(await getObject(policy('gpt-external-auth'))).toBeDefined();

    await deleteObject(ref('gateway.networking.k8s.io/v1', 'HTTPRoute', 'gpt-external'));
    await waitFor('the external SecurityPolicy to go after the HTTPRoute', async () => (await getObject(policy('gpt-external-auth'))) === undefined);
    expect(await getObject(route('gpt-internal'))).toBeDefined();
    expect((await getObject<KubeObject & { data: Record<string, string> }>(secret('gpt-api-keys')))!.data).toEqual(keysBefore);
  });

  it('re-enabling brings the route and policy back with the same keys', async () => {
    await applyObject(passthroughModel(ns, 'gpt', { declared: ['gpt-4o', 'gpt-4.1'], external: true }));
    await waitReady('gpt');
    const records = await listKeys(client, { kind: 'PassthroughModel', name: 'gpt', namespace: ns });
    expect(records).toHaveLength(1);
    expect(JSON.stringify((await getObject(policy('gpt-external-auth')))?.spec)).toContain(records[0].clientId);
  });

  it('keeps keys across re-apply of the same spec and an operator restart', async () => {
    const before = (await getObject<KubeObject & { data: Record<string, string> }>(secret('gpt-api-keys')))!.data;
    await applyObject(passthroughModel(ns, 'gpt', { declared: ['gpt-4o', 'gpt-4.1'] }), { fieldManager: 'argocd-controller' });
    expect(await operator.stop()).toBe(0);
    start('operator-a2');
    await applyObject(passthroughModel(ns, 'gpt', { declared: ['gpt-4o'] }));
    await waitReady('gpt');
    expect((await getObject<KubeObject & { data: Record<string, string> }>(secret('gpt-api-keys')))!.data).toEqual(before);
  });

  it('repairs a generated object deleted out of band without waiting for a resync', async () => {
    // The operator was just restarted (the last test waited for its first pass): its workers start
    // only once every watch has listed, so this deletion is an event, not a wait for the resync.
    const before = await getObject<KubeObject>(policy('gpt-external-auth'));
    await deleteObject(policy('gpt-external-auth'));
    await waitFor('the external SecurityPolicy re-created', async () => {
      const now = await getObject<KubeObject>(policy('gpt-external-auth'));
      return now !== undefined && now.metadata.uid !== before!.metadata.uid;
    }, { timeoutMs: 20_000 });
  });

  // The operator no longer polls for a missing credential: only its watch on the Secret brings the model back.
  it('reports a missing provider credential as a condition and converges when it appears, from the Secret watch', async () => {
    await applyObject(passthroughModel(ns, 'claude', { credentialSecretName: 'late-credential' }));
    await waitFor('CredentialResolved=False SecretNotFound', async () => condition(await model('claude'), 'CredentialResolved')?.reason === 'SecretNotFound');
    expect((await model('claude'))!.status).toMatchObject({ phase: 'Degraded' });
    // The Secret appears without the entry: still Degraded, now for the missing entry.
    await applyObject({ ...providerCredential(ns, 'late-credential'), stringData: { token: 'not-the-api-key' } });
    await waitFor('CredentialResolved=False APIKeyMissing', async () => condition(await model('claude'), 'CredentialResolved')?.reason === 'APIKeyMissing');
    expect((await model('claude'))!.status).toMatchObject({ phase: 'Degraded' });
    await applyObject(providerCredential(ns, 'late-credential', 'sk-late-provider-secret-abcdefghijklmnop'));
    await waitReady('claude', 90_000);
  });

  it('deletes everything, keys included, when the model is deleted', async () => {
    const uid = (await model('gpt'))!.metadata.uid;
    const keyInfo = new RegExp(`\\nnls_api_key_info\\{[^}]*namespace="${ns}",model="gpt",`);
    expect(await operator.metrics()).toMatch(keyInfo);
    await deleteObject({ ...PTM, metadata: { name: 'gpt', namespace: ns } });
    await waitFor('the model to be gone', async () => (await model('gpt')) === undefined);
    expect(await getObject(secret('gpt-api-keys'))).toBeUndefined();
    expect(await getObject(configMap('gpt-api-key-metadata'))).toBeUndefined();
    // Its keys' nls_api_key_info series went with them (the finalizer drops them before it is removed).
    expect(await operator.metrics()).not.toMatch(keyInfo);
    for (const kind of ['AIGatewayRoute', 'AIServiceBackend', 'BackendSecurityPolicy']) {
      const { items } = await client.list('aigateway.envoyproxy.io/v1beta1', kind, { namespace: ns });
      expect(items.filter((o) => o.metadata.ownerReferences?.some((r) => r.uid === uid))).toEqual([]);
    }
    const { items: policies } = await client.list('gateway.envoyproxy.io/v1alpha1', 'SecurityPolicy', { namespace: ns });
    expect(policies.filter((o) => o.metadata.ownerReferences?.some((r) => r.uid === uid))).toEqual([]);
  });

  it('never writes a secret value to logs, Events or status', async () => {
    const secrets = [...mintedKeys, providerSecretValue, 'sk-late-provider-secret-abcdefghijklmnop'];
    const { items: events } = await client.list('v1', 'Event', { namespace: ns });
    expect(events.length).toBeGreaterThan(0);
    const { items: models } = await client.list(PTM.apiVersion, PTM.kind, { namespace: ns });
    const haystacks = {
      logs: operators.flatMap((o) => o.lines).join('\n'),
      events: JSON.stringify(events),
      status: JSON.stringify(models.map((m) => m.status)),
    };
    expect(haystacks.logs.length).toBeGreaterThan(0);
    for (const [where, text] of Object.entries(haystacks)) {
      for (const s of secrets) expect({ where, leaked: text.includes(s) }).toEqual({ where, leaked: false });
    }
  });

  it('serves /healthz, /readyz and Prometheus /metrics', async () => {
    await waitFor('readyz', async () => (await fetch(`http://127.0.0.1:${operator.healthPort}/readyz`)).status === 200);
    expect((await fetch(`http://127.0.0.1:${operator.healthPort}/healthz`)).status).toBe(200);
    const text = await operator.metrics();
    expect(text).toMatch(/nls_reconcile_total\{kind="PassthroughModel",result="success"\} \d+/);
    expect(text).toContain('nls_reconcile_duration_seconds_bucket');
    expect(text).toContain('nls_workqueue_depth{kind="PassthroughModel"}');
  });
});
