// The AgentDeployment upgrade guard (seed 000): a fail-closed mutating webhook pointing at a
// Service that does not exist. While it is installed, AgentDeployment CREATE and UPDATE are
// denied before any validator runs and leave no trace, and LLMModel/PassthroughModel writes
// still pass through the real webhook server. A private control plane keeps the guard exactly
// as the chart renders it (no namespaceSelector) without affecting other test files.
// Inside the test network namespace the API server cannot reach anything but loopback; the guard's
// Service does not exist, so the call fails at once either way.
import * as k8s from '@kubernetes/client-node';
import { type ControlPlane, installCRDs, startControlPlane, uniqueName } from '../support/cluster';
import { waitFor } from '../support/processes';
import { collectionPath, kubeRequest } from '../support/webhook/kube-raw';
import { type WebhookEnvironment, crdDirectory, createNamespace, impersonating, selectorLabel, startWebhookEnvironment } from '../support/webhook/webhook-env';
import { plainObjectsByFile } from '../../src/chart/render';
import { defaultValues } from '../../src/chart/values-schema';

let plane: ControlPlane;
let admin: k8s.KubeConfig;
let env: WebhookEnvironment;
let team: string;
let guardName: string;

const agent = (name: string, modelName = 'gpt-4o') => ({
  apiVersion: 'llm.nebari.dev/v1alpha1',
  kind: 'AgentDeployment',
  metadata: { name },
  spec: { image: 'registry.example.com/agent:1.0', model: { externalAPI: { type: 'custom', baseURL: 'https://llm.example.com/v1', modelName } } },
});

// The guard exactly as the chart renders it (constructs/webhooks.ts), for a release whose
// namespace is the webhook environment's operator namespace.
const GUARD_RELEASE = 'guard-test';
function guard(namespace: string): k8s.V1MutatingWebhookConfiguration {
  const values = defaultValues();
  values.webhook.upgradeGuard.enabled = true;
  const [rendered] = plainObjectsByFile(values, { releaseName: GUARD_RELEASE, namespace })['agentdeployment-upgrade-guard.yaml'];
  return rendered as k8s.V1MutatingWebhookConfiguration;
}
/** The operator's ServiceAccount in that release (the chart's default name: the full name). */
const operatorUser = (namespace: string) => `system:serviceaccount:${namespace}:${GUARD_RELEASE}-nebari-llm-serving`;

/** Installs the guard and waits until the API server calls it. */
async function installGuard(): Promise<void> {
  const admission = admin.makeApiClient(k8s.AdmissionregistrationV1Api);
  await admission.createMutatingWebhookConfiguration({ body: guard(env.operatorNamespace) });
  await waitFor('the API server to enforce the guard', async () => (await probe()).status >= 400, { timeoutMs: 30_000 });
}

/** Removes the guard and waits until AgentDeployment writes pass again. */
async function removeGuard(): Promise<void> {
  await admin.makeApiClient(k8s.AdmissionregistrationV1Api).deleteMutatingWebhookConfiguration({ name: guardName });
  await waitFor('AgentDeployment writes to pass again', async () => (await probe()).status < 400, { timeoutMs: 30_000 });
}

/** A dry-run AgentDeployment create: denied while the API server enforces the guard. */
function probe() {
  return kubeRequest(admin, 'POST', `${collectionPath(team, 'agentdeployments')}?dryRun=All`, agent('probe'));
}

// Everything a denied request could have left behind, per namespace.
async function traces(namespaces: string[]): Promise<Record<string, number>> {
  const core = admin.makeApiClient(k8s.CoreV1Api);
  const counts: Record<string, number> = {};
  for (const namespace of namespaces) {
    counts[`${namespace}/configmaps`] = (await core.listNamespacedConfigMap({ namespace })).items.length;
    counts[`${namespace}/secrets`] = (await core.listNamespacedSecret({ namespace })).items.length;
    counts[`${namespace}/events`] = (await core.listNamespacedEvent({ namespace })).items.length;
  }
  const agents = await kubeRequest<{ items: unknown[] }>(admin, 'GET', '/apis/llm.nebari.dev/v1alpha1/agentdeployments');
  counts.agentdeployments = agents.body.items.length;
  return counts;
}

beforeAll(async () => {
  plane = await startControlPlane({ mode: 'apiserver' });
  admin = plane.kubeConfig();
  await installCRDs([crdDirectory], admin);
  const id = uniqueName('wh-guard');
  env = await startWebhookEnvironment({ kubeConfig: admin, id });
  team = `${id}-team`;
  guardName = guard(env.operatorNamespace).metadata!.name!;
  await createNamespace(admin, team, { [selectorLabel]: id });
}, 120_000);

afterAll(async () => {
  await env?.close();
  await plane?.stop();
});

describe('the AgentDeployment upgrade guard', () => {
  it('denies AgentDeployment CREATE and UPDATE without a trace while LLMModel and PassthroughModel writes succeed', async () => {
    const existing = await kubeRequest(admin, 'POST', collectionPath(team, 'agentdeployments'), agent('existing'));
    expect(existing).toMatchObject({ status: 201 });

    const admission = admin.makeApiClient(k8s.AdmissionregistrationV1Api);
    const namespaces = [team, env.operatorNamespace, 'default'];
    // The API server loads webhook configurations asynchronously; wait until the guard bites.
    await installGuard();
    const before = await traces(namespaces);
    const callsBefore = env.calls.length;

    const create = await kubeRequest(admin, 'POST', collectionPath(team, 'agentdeployments'), agent('guarded'));
    expect(create.status).toBeGreaterThanOrEqual(400);
    expect(String(create.body.message)).toContain('failed calling webhook "agentdeployment-upgrade-guard.llm.nebari.dev"');

    const stored = existing.body as { metadata: { resourceVersion: string; generation: number } };
    const changed = { ...agent('existing', 'gpt-5'), metadata: { name: 'existing', resourceVersion: stored.metadata.resourceVersion } };
    const update = await kubeRequest(admin, 'PUT', `${collectionPath(team, 'agentdeployments')}/existing`, changed);
    expect(update.status).toBeGreaterThanOrEqual(400);
    expect(String(update.body.message)).toContain('agentdeployment-upgrade-guard.llm.nebari.dev');

    const after = await kubeRequest(admin, 'GET', `${collectionPath(team, 'agentdeployments')}/existing`);
    expect(after.body).toMatchObject({
      metadata: { resourceVersion: stored.metadata.resourceVersion, generation: stored.metadata.generation },
      spec: { model: { externalAPI: { modelName: 'gpt-4o' } } },
    });
    expect((await kubeRequest(admin, 'GET', `${collectionPath(team, 'agentdeployments')}/guarded`)).status).toBe(404);
    expect(await traces(namespaces)).toEqual(before);
    // Mutating admission (the guard) failed first, so no validator ever saw the writes.
    expect(env.calls.slice(callsBefore).filter((p) => p.includes('agentdeployment'))).toEqual([]);

    const model = await kubeRequest(admin, 'POST', collectionPath(env.operatorNamespace, 'llmmodels'), {
      apiVersion: 'llm.nebari.dev/v1alpha1',
      kind: 'LLMModel',
      metadata: { name: 'during-guard' },
      spec: { model: { name: 'Qwen/Qwen3-0.6B', source: 'huggingface' }, resources: { gpu: { count: 1 } }, access: { public: true } },
    });
    expect(model).toMatchObject({ status: 201, body: { spec: { serving: { tensorParallelism: 1 } } } });
    const provider = await kubeRequest(admin, 'POST', collectionPath(env.operatorNamespace, 'passthroughmodels'), {
      apiVersion: 'llm.nebari.dev/v1alpha1',
      kind: 'PassthroughModel',
      metadata: { name: 'during-guard-provider' },
      spec: { provider: { hostname: 'api.openai.com', credentialSecretName: 'k' }, models: { declared: ['gpt-4o'] }, access: { public: true } },
    });
    expect(provider).toMatchObject({ status: 201 });
    const updatedModel = await kubeRequest(admin, 'PATCH', `${collectionPath(env.operatorNamespace, 'llmmodels')}/during-guard`, { spec: { serving: { replicas: 2 } } }, 'application/merge-patch+json');
    expect(updatedModel).toMatchObject({ status: 200, body: { spec: { serving: { replicas: 2 } } } });
    expect(env.calls.slice(callsBefore)).toEqual(expect.arrayContaining(['/mutate-llmmodel', '/validate-llmmodel', '/validate-passthroughmodel']));

    // Removing the guard restores AgentDeployment writes (the guard, nothing else, denied them).
    await admission.deleteMutatingWebhookConfiguration({ name: guardName });
    await waitFor('AgentDeployment writes to pass again', async () => (await probe()).status < 400, { timeoutMs: 30_000 });
    expect(await kubeRequest(admin, 'POST', collectionPath(team, 'agentdeployments'), agent('after-guard'))).toMatchObject({ status: 201 });
  });

  it('lets the operator remove its finalizer from a deleted agent, so deletions finish during an upgrade', async () => {
    const finalized = { ...agent('finalized'), metadata: { name: 'finalized', finalizers: ['llm.nebari.dev/cleanup'] } };
    expect(await kubeRequest(admin, 'POST', collectionPath(team, 'agentdeployments'), finalized)).toMatchObject({ status: 201 });
    // The operator's rights come from its own RBAC in a cluster; here, any rights will do.
    const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: 'guard-test-operator' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: operatorUser(env.operatorNamespace) }],
      },
    });
    await installGuard();
    try {
      const path = `${collectionPath(team, 'agentdeployments')}/finalized`;
      // DELETE is not guarded: the agent is marked for deletion and waits for the finalizer.
      expect(await kubeRequest(admin, 'DELETE', path)).toMatchObject({ status: 200 });
      const unfinalize = { metadata: { finalizers: null } };
      // Anyone else's UPDATE is still denied by the guard...
      const other = await kubeRequest(admin, 'PATCH', path, unfinalize, 'application/merge-patch+json');
      expect(other.status).toBeGreaterThanOrEqual(400);
      expect(String(other.body.message)).toContain('agentdeployment-upgrade-guard.llm.nebari.dev');
      // ...the operator's finalizer removal passes, and the deletion completes.
      const operator = impersonating(admin, operatorUser(env.operatorNamespace));
      expect(await kubeRequest(operator, 'PATCH', path, unfinalize, 'application/merge-patch+json')).toMatchObject({ status: 200 });
      expect((await kubeRequest(admin, 'GET', path)).status).toBe(404);
      // A user's create is still denied.
      const create = await kubeRequest(admin, 'POST', collectionPath(team, 'agentdeployments'), agent('during-upgrade'));
      expect(String(create.body.message)).toContain('failed calling webhook "agentdeployment-upgrade-guard.llm.nebari.dev"');
    } finally {
      await removeGuard();
      await rbac.deleteClusterRoleBinding({ name: 'guard-test-operator' });
    }
  });
});
