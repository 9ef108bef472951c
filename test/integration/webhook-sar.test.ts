// The confused-deputy guard with real RBAC: whoever creates or updates an AgentDeployment that
// names a credentials Secret must be allowed to `get` that Secret themselves. Users are
// impersonated through the admin credentials, so the API server sends their identity to the
// webhook, which asks the API server with a SubjectAccessReview.
import * as k8s from '@kubernetes/client-node';
import { installCRDs, kubeConfig, uniqueName } from '../support/cluster';
import { collectionPath, kubeRequest } from '../support/webhook/kube-raw';
import {
  type WebhookEnvironment,
  crdDirectory,
  createNamespace,
  impersonating,
  selectorLabel,
  startWebhookEnvironment,
} from '../support/webhook/webhook-env';

const admin = kubeConfig();
let env: WebhookEnvironment;
let team: string;
const carol = 'carol@example.com';
const dave = 'dave@example.com';

const agent = (name: string, secret: string, modelName = 'gpt-4o') => ({
  apiVersion: 'llm.nebari.dev/v1alpha1',
  kind: 'AgentDeployment',
  metadata: { name },
  spec: {
    image: 'registry.example.com/agent:1.0',
    model: { externalAPI: { type: 'openai', baseURL: 'https://api.openai.com/v1', modelName, credentialsRef: { name: secret, key: 'apiKey' } } },
  },
});

beforeAll(async () => {
  await installCRDs([crdDirectory]);
  const id = uniqueName('wh-sar');
  env = await startWebhookEnvironment({ kubeConfig: admin, id });
  team = `${id}-team`;
  await createNamespace(admin, team, { [selectorLabel]: id });
  const core = admin.makeApiClient(k8s.CoreV1Api);
  const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
  for (const name of ['team-key', 'other-key']) {
    await core.createNamespacedSecret({ namespace: team, body: { metadata: { name }, stringData: { apiKey: `sk-${name}` } } });
  }
  await rbac.createNamespacedRole({
    namespace: team,
    body: {
      metadata: { name: 'agent-writer' },
      rules: [{ apiGroups: ['llm.nebari.dev'], resources: ['agentdeployments'], verbs: ['get', 'create', 'update', 'patch'] }],
    },
  });
  await rbac.createNamespacedRole({
    namespace: team,
    body: { metadata: { name: 'read-team-key' }, rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['team-key'], verbs: ['get'] }] },
  });
  const subject = (name: string) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });
  await rbac.createNamespacedRoleBinding({
    namespace: team,
    body: { metadata: { name: 'agent-writers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'agent-writer' }, subjects: [subject(carol), subject(dave)] },
  });
  await rbac.createNamespacedRoleBinding({
    namespace: team,
    body: { metadata: { name: 'team-key-readers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-team-key' }, subjects: [subject(carol)] },
  });
});
afterAll(() => env?.close());

const as = (user: string) => impersonating(admin, user);

describe('credentialsRef admission (SubjectAccessReview as the requesting user)', () => {
  it('allows a user who may get the Secret', async () => {
    const response = await kubeRequest(as(carol), 'POST', collectionPath(team, 'agentdeployments'), agent('carols-agent', 'team-key'));
    expect(response).toMatchObject({ status: 201 });
  });

  it('denies a user who may create AgentDeployments but not get the Secret', async () => {
    const response = await kubeRequest(as(dave), 'POST', collectionPath(team, 'agentdeployments'), agent('daves-agent', 'team-key'));
    expect(response).toMatchObject({ status: 403 });
    expect(String(response.body.message)).toContain(
      `denied the request: spec.model.externalAPI.credentialsRef.name: user "${dave}" may not get Secret "team-key" in namespace "${team}", so the agent may not use it either`,
    );
    expect((await kubeRequest(admin, 'GET', `${collectionPath(team, 'agentdeployments')}/daves-agent`)).status).toBe(404);
  });

  it('denies even a dry run', async () => {
    const response = await kubeRequest(as(dave), 'POST', `${collectionPath(team, 'agentdeployments')}?dryRun=All`, agent('daves-dry-run', 'team-key'));
    expect(response).toMatchObject({ status: 403 });
  });

  it('denies a Secret outside the user\'s grant', async () => {
    const response = await kubeRequest(as(carol), 'POST', collectionPath(team, 'agentdeployments'), agent('carols-other', 'other-key'));
    expect(response).toMatchObject({ status: 403 });
    expect(String(response.body.message)).toContain(`user "${carol}" may not get Secret "other-key"`);
  });

  it('reviews every UPDATE, even when the reference did not change', async () => {
    const path = `${collectionPath(team, 'agentdeployments')}/carols-agent`;
    const patch = { spec: { model: { externalAPI: { modelName: 'gpt-4.1' } } } };
    const byDave = await kubeRequest(as(dave), 'PATCH', path, patch, 'application/merge-patch+json');
    expect(byDave).toMatchObject({ status: 403 });
    expect(String(byDave.body.message)).toContain(`user "${dave}" may not get Secret "team-key"`);
    const byCarol = await kubeRequest(as(carol), 'PATCH', path, patch, 'application/merge-patch+json');
    expect(byCarol).toMatchObject({ status: 200, body: { spec: { model: { externalAPI: { modelName: 'gpt-4.1' } } } } });
  });
});

// The same guard on model credentials: a PassthroughModel's key goes to the host it names, so a
// user who may write models but not read a key must not be able to send that key anywhere.
describe('credentialSecretName admission on PassthroughModel', () => {
  const erin = 'erin@example.com';
  const frank = 'frank@example.com';
  const model = (name: string, hostname = 'api.openai.com') => ({
    apiVersion: 'llm.nebari.dev/v1alpha1',
    kind: 'PassthroughModel',
    metadata: { name },
    spec: { provider: { hostname, credentialSecretName: 'provider-key' }, models: { declared: ['gpt-4o'] }, access: { public: true } },
  });
  const models = () => collectionPath(env.operatorNamespace, 'passthroughmodels');

  beforeAll(async () => {
    const ns = env.operatorNamespace;
    const core = admin.makeApiClient(k8s.CoreV1Api);
    const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'provider-key' }, stringData: { apiKey: 'sk-provider' } } });
    const subject = (name: string) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });
    await rbac.createNamespacedRole({
      namespace: ns,
      body: { metadata: { name: 'model-writer' }, rules: [{ apiGroups: ['llm.nebari.dev'], resources: ['passthroughmodels', 'llmmodels'], verbs: ['get', 'create', 'update', 'patch'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: { metadata: { name: 'model-writers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'model-writer' }, subjects: [subject(erin), subject(frank)] },
    });
    await rbac.createNamespacedRole({
      namespace: ns,
      body: { metadata: { name: 'read-provider-key' }, rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['provider-key'], verbs: ['get'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: { metadata: { name: 'provider-key-readers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-provider-key' }, subjects: [subject(erin)] },
    });
  });

  it('admits a model from a user who may get the key, and denies one from a user who may not', async () => {
    expect(await kubeRequest(as(erin), 'POST', models(), model('erins-model'))).toMatchObject({ status: 201 });
    const denied = await kubeRequest(as(frank), 'POST', models(), model('franks-model', 'collector.attacker.example'));
    expect(denied).toMatchObject({ status: 403 });
    expect(String(denied.body.message)).toContain(
      `denied the request: spec.provider.credentialSecretName: user "${frank}" may not get Secret "provider-key" in namespace "${env.operatorNamespace}", so the model may not use it either`,
    );
  });

  it('denies pointing an existing model (and its key) at another host, but not unrelated changes', async () => {
    const path = `${models()}/erins-model`;
    const redirect = await kubeRequest(as(frank), 'PATCH', path, { spec: { provider: { hostname: 'collector.attacker.example' } } }, 'application/merge-patch+json');
    expect(redirect).toMatchObject({ status: 403 });
    expect(String(redirect.body.message)).toContain(`user "${frank}" may not get Secret "provider-key"`);
    const relabel = await kubeRequest(as(frank), 'PATCH', path, { metadata: { labels: { team: 'search' } } }, 'application/merge-patch+json');
    expect(relabel).toMatchObject({ status: 200, body: { metadata: { labels: { team: 'search' } }, spec: { provider: { hostname: 'api.openai.com' } } } });
  });

  it('reviews an LLMModel\'s Hugging Face token Secret the same way', async () => {
    const llm = (name: string) => ({
      apiVersion: 'llm.nebari.dev/v1alpha1',
      kind: 'LLMModel',
      metadata: { name },
      spec: { model: { name: 'Qwen/Qwen3-0.6B', source: 'huggingface', authSecretName: 'provider-key' }, resources: { gpu: { count: 1 } }, access: { public: true } },
    });
    const denied = await kubeRequest(as(frank), 'POST', collectionPath(env.operatorNamespace, 'llmmodels'), llm('franks-llm'));
    expect(denied).toMatchObject({ status: 403 });
    expect(String(denied.body.message)).toContain(`spec.model.authSecretName: user "${frank}" may not get Secret "provider-key"`);
    expect(await kubeRequest(as(erin), 'POST', collectionPath(env.operatorNamespace, 'llmmodels'), llm('erins-llm'))).toMatchObject({ status: 201 });
  });
});
