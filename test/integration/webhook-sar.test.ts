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
  // The image allow-list (chart value webhook.allowedImages) as an installation that pins its registry sets it.
  env = await startWebhookEnvironment({ kubeConfig: admin, id, server: { settings: { allowedImages: ['registry.example.com/'] } } });
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
    spec: { provider: { hostname, credentialSecretName: 'provider-key' }, models: { declared: [`gpt-4o-${name}`] }, access: { public: true } },
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
      spec: { model: { name: `Qwen/Qwen3-0.6B-${name}`, source: 'huggingface', authSecretName: 'provider-key' }, resources: { gpu: { count: 1 } }, access: { public: true } },
    });
    const denied = await kubeRequest(as(frank), 'POST', collectionPath(env.operatorNamespace, 'llmmodels'), llm('franks-llm'));
    expect(denied).toMatchObject({ status: 403 });
    expect(String(denied.body.message)).toContain(`spec.model.authSecretName: user "${frank}" may not get Secret "provider-key"`);
    expect(await kubeRequest(as(erin), 'POST', collectionPath(env.operatorNamespace, 'llmmodels'), llm('erins-llm'))).toMatchObject({ status: 201 });
  });
});

// Issue 29: whoever may write LLMModels must not reach the Secrets of the release namespace through
// the pods the model runs. Each case was admitted before (and its Secret landed in the serving
// Deployment or the provider's pod template); now the webhook reviews every reference as the
// requesting user and keeps provider overrides inside their allow-list.
describe('LLMModel authors and the Secrets of the release namespace', () => {
  const mallory = 'mallory@example.com';
  const llmModels = () => collectionPath(env.operatorNamespace, 'llmmodels', 'v1beta1');
  const served = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'LLMModel',
    metadata: { name },
    // One model id per model (the webhook refuses a second model serving an id).
    spec: { model: { name: `Qwen/Qwen3-0.6B-${name}`, source: 'huggingface' }, resources: { gpu: { count: 1 } }, access: { public: true }, ...spec },
  });
  const stored = async (name: string) => (await kubeRequest(admin, 'GET', `${llmModels()}/${name}`)).status;

  beforeAll(async () => {
    const ns = env.operatorNamespace;
    const core = admin.makeApiClient(k8s.CoreV1Api);
    const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
    // Stands in for the portal's session key, the webhook CA, every <model>-api-keys.
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'portal-session' }, stringData: { key: 'session-sealing-key' } } });
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'key-audit' }, data: { entries: '[]' } } });
    await rbac.createNamespacedRole({
      namespace: ns,
      body: { metadata: { name: 'llm-writer' }, rules: [{ apiGroups: ['llm.nebari.dev'], resources: ['llmmodels'], verbs: ['get', 'create', 'update', 'patch'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: 'llm-writers' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'llm-writer' },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: mallory }],
      },
    });
  });

  it('denies spec.serving.env secretKeyRef to a user who may not get the Secret, and stores nothing', async () => {
    const model = served('exfiltrate-env', {
      serving: { image: 'registry.example.com/exfiltrate:1', env: [{ name: 'STOLEN', valueFrom: { secretKeyRef: { name: 'portal-session', key: 'key' } } }] },
    });
    const denied = await kubeRequest(as(mallory), 'POST', llmModels(), model);
    expect(denied).toMatchObject({ status: 403 });
    expect(String(denied.body.message)).toContain(
      `spec.serving.env[0].valueFrom.secretKeyRef.name: user "${mallory}" may not get Secret "portal-session" in namespace "${env.operatorNamespace}", so the model may not use it either`,
    );
    expect(await stored('exfiltrate-env')).toBe(404);
    // The same object from someone who may read the Secret is admitted: the rule is about who asks.
    expect(await kubeRequest(admin, 'POST', `${llmModels()}?dryRun=All`, model)).toMatchObject({ status: 201 });
  });

  it('denies configMapKeyRef the same way, and valueFrom kinds it cannot review', async () => {
    const configMap = await kubeRequest(as(mallory), 'POST', llmModels(), served('exfiltrate-cm', { serving: { env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'key-audit', key: 'entries' } } }] } }));
    expect(configMap).toMatchObject({ status: 403 });
    expect(String(configMap.body.message)).toContain(`user "${mallory}" may not get ConfigMap "key-audit"`);
    const fileKey = await kubeRequest(admin, 'POST', llmModels(), served('file-key', { serving: { env: [{ name: 'A', valueFrom: { fileKeyRef: { volumeName: 'v', path: 'p', key: 'k' } } }] } }));
    expect(fileKey).toMatchObject({ status: 422 });
    expect(String(fileKey.body.message)).toContain("spec.serving.env[0].valueFrom.fileKeyRef: cannot be checked against the requesting user's rights");
  });

  it('denies changing the image of a model whose Secrets the user may not read', async () => {
    expect(
      await kubeRequest(admin, 'POST', llmModels(), served('gated', { model: { name: 'Qwen/Qwen3-0.6B-gated', source: 'huggingface', authSecretName: 'portal-session' }, serving: { image: 'registry.example.com/vllm:1' } })),
    ).toMatchObject({ status: 201 });
    const swap = await kubeRequest(as(mallory), 'PATCH', `${llmModels()}/gated`, { spec: { serving: { image: 'registry.example.com/exfiltrate:1' } } }, 'application/merge-patch+json');
    expect(swap).toMatchObject({ status: 403 });
    expect(String(swap.body.message)).toContain(`spec.model.authSecretName: user "${mallory}" may not get Secret "portal-session"`);
    const relabel = await kubeRequest(as(mallory), 'PATCH', `${llmModels()}/gated`, { metadata: { labels: { team: 'search' } } }, 'application/merge-patch+json');
    expect(relabel).toMatchObject({ status: 200 });
  });

  it.each([
    ['kuberay', 'serviceAccountName', { spec: { rayClusterConfig: { headGroupSpec: { template: { spec: { serviceAccountName: 'nebari-llm-serving-operator' } } } } } }, 'headGroupSpec.template.spec.serviceAccountName: is not allowed in kuberay overrides'],
    ['dynamo', 'a Secret volume', { spec: { services: { VllmWorker: { extraPodSpec: { volumes: [{ name: 'k', secret: { secretName: 'portal-session' } }] } } } } }, 'VllmWorker.extraPodSpec.volumes: is not allowed in dynamo overrides'],
    ['kuberay', 'hostNetwork', { spec: { rayClusterConfig: { workerGroupSpecs: [{ groupName: 'gpu-workers', template: { spec: { hostNetwork: true } } }] } } }, 'workerGroupSpecs[0].template.spec.hostNetwork: is not allowed in kuberay overrides (host namespaces are not allowed)'],
    ['kaito', 'a pod template', { inference: { template: { spec: { serviceAccountName: 'nebari-llm-serving-operator', hostNetwork: true } } } }, 'spec.provider.overrides.inference.template: is not allowed in kaito overrides'],
  ])('denies %s overrides setting %s, even from an administrator', async (provider, what, overrides, message) => {
    const name = `ovr-${provider}-${what.replace(/[^a-z]/gi, '').toLowerCase()}`.slice(0, 40);
    const response = await kubeRequest(admin, 'POST', llmModels(), served(name, { provider: { name: provider, overrides }, serving: { image: 'registry.example.com/serve:1' } }));
    expect(response).toMatchObject({ status: 422 });
    expect(String(response.body.message)).toContain(message);
    expect(await stored(name)).toBe(404);
  });

  it('denies an image outside webhook.allowedImages', async () => {
    const response = await kubeRequest(admin, 'POST', llmModels(), served('foreign-image', { serving: { image: 'attacker.example/exfiltrate:1' } }));
    expect(response).toMatchObject({ status: 422 });
    expect(String(response.body.message)).toContain('spec.serving.image: image "attacker.example/exfiltrate:1" is not allowed by this installation (allowed: "registry.example.com/")');
    expect(await kubeRequest(admin, 'POST', llmModels(), served('pinned-image', { serving: { image: 'registry.example.com/vllm:1' } }))).toMatchObject({ status: 201 });
  });
});

// Issue 29, Medium 4: the operator mints an agent bound by modelRef a key its author can read, so
// binding an agent to a restricted model (not spec.access.public) needs the RBAC verb `bind` on that
// model, reviewed as the requesting user; a public model needs nothing more than the agent itself.
describe('binding an AgentDeployment to a restricted model', () => {
  const grace = 'grace@example.com';
  const heidi = 'heidi@example.com';
  const agents = () => collectionPath(env.operatorNamespace, 'agentdeployments');
  const passthrough = (name: string, access: Record<string, unknown>) => ({
    apiVersion: 'llm.nebari.dev/v1alpha1',
    kind: 'PassthroughModel',
    metadata: { name },
    // Each model its own id: one id is served by one model per endpoint (issue 29, Low).
    spec: { provider: { hostname: 'api.openai.com', credentialSecretName: 'bind-provider-key' }, models: { declared: [`${name}-gpt`] }, access },
  });
  const bound = (name: string, model: string) => ({
    apiVersion: 'llm.nebari.dev/v1alpha1',
    kind: 'AgentDeployment',
    metadata: { name },
    spec: { image: 'registry.example.com/agent:1.0', model: { modelRef: { kind: 'PassthroughModel', name: model, modelName: `${model}-gpt` } } },
  });

  beforeAll(async () => {
    const ns = env.operatorNamespace;
    const core = admin.makeApiClient(k8s.CoreV1Api);
    const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'bind-provider-key' }, stringData: { apiKey: 'sk-provider' } } });
    for (const model of [passthrough('bind-restricted', { groups: ['ml-team'] }), passthrough('bind-public', { public: true })]) {
      expect(await kubeRequest(admin, 'POST', collectionPath(ns, 'passthroughmodels'), model)).toMatchObject({ status: 201 });
    }
    const subject = (name: string) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });
    await rbac.createNamespacedRole({
      namespace: ns,
      body: { metadata: { name: 'bind-agent-writer' }, rules: [{ apiGroups: ['llm.nebari.dev'], resources: ['agentdeployments'], verbs: ['get', 'create', 'update', 'patch'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: { metadata: { name: 'bind-agent-writers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'bind-agent-writer' }, subjects: [subject(grace), subject(heidi)] },
    });
    // What an administrator grants to let grace bind agents to the restricted model.
    await rbac.createNamespacedRole({
      namespace: ns,
      body: { metadata: { name: 'bind-restricted-model' }, rules: [{ apiGroups: ['llm.nebari.dev'], resources: ['passthroughmodels'], resourceNames: ['bind-restricted'], verbs: ['bind'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: { metadata: { name: 'bind-restricted-model' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'bind-restricted-model' }, subjects: [subject(grace)] },
    });
  });

  it('denies a user who may create agents but not bind the restricted model, naming the verb to grant', async () => {
    const denied = await kubeRequest(as(heidi), 'POST', agents(), bound('heidis-agent', 'bind-restricted'));
    expect(denied).toMatchObject({ status: 403 });
    expect(String(denied.body.message)).toContain(
      `spec.model.modelRef.name: PassthroughModel "bind-restricted" is restricted (not spec.access.public) and user "${heidi}" may not bind agents to it`,
    );
    expect(String(denied.body.message)).toContain('verbs [bind]');
  });

  it('admits a user granted `bind` on the model, and anyone allowed to create agents for a public model', async () => {
    expect(await kubeRequest(as(grace), 'POST', agents(), bound('graces-agent', 'bind-restricted'))).toMatchObject({ status: 201 });
    expect(await kubeRequest(as(heidi), 'POST', agents(), bound('heidis-public-agent', 'bind-public'))).toMatchObject({ status: 201 });
  });

  it('denies re-pointing an agent to the restricted model without `bind`', async () => {
    const path = `${agents()}/heidis-public-agent`;
    const repoint = await kubeRequest(as(heidi), 'PATCH', path, { spec: { model: { modelRef: { name: 'bind-restricted', modelName: 'bind-restricted-gpt' } } } }, 'application/merge-patch+json');
    expect(repoint).toMatchObject({ status: 403 });
    expect(String(repoint.body.message)).toContain(`user "${heidi}" may not bind agents to it`);
  });
});

describe('routing a PassthroughModel\'s requests to another model (spec.routing)', () => {
  // bind-restricted, and grace's `bind` on it, come from the describe above.
  const grace = 'grace@example.com';
  const heidi = 'heidi@example.com';
  const models = () => collectionPath(env.operatorNamespace, 'passthroughmodels', 'v1beta1');
  const routed = (name: string, fallback: string) => ({
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind: 'PassthroughModel',
    metadata: { name },
    spec: {
      provider: { hostname: 'api.openai.com', credential: { secretRef: { name: 'bind-provider-key' } } },
      models: { declared: [`${name}-gpt`] },
      access: { groups: ['ml-team'] },
      routing: { fallback: [{ name: fallback, model: `${fallback}-gpt` }] },
    },
  });

  beforeAll(async () => {
    const ns = env.operatorNamespace;
    const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
    const subject = (name: string) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });
    // Both may create models with the provider key they may read; only grace may bind bind-restricted.
    await rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: 'route-model-writer' },
        rules: [
          { apiGroups: ['llm.nebari.dev'], resources: ['passthroughmodels'], verbs: ['get', 'create', 'update', 'patch'] },
          { apiGroups: [''], resources: ['secrets'], resourceNames: ['bind-provider-key'], verbs: ['get'] },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: { metadata: { name: 'route-model-writers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'route-model-writer' }, subjects: [subject(grace), subject(heidi)] },
    });
  });

  it('denies a fallback to a model the user may not bind, naming the field and the verb to grant, and admits one granted `bind`', async () => {
    const denied = await kubeRequest(as(heidi), 'POST', models(), routed('heidis-router', 'bind-restricted'));
    expect(`${denied.status} ${String(denied.body.message)}`).toMatch(/^403 /);
    expect(String(denied.body.message)).toContain(`spec.routing.fallback[0].name: user "${heidi}" may not route requests to PassthroughModel "bind-restricted"`);
    expect(String(denied.body.message)).toContain('verbs [bind]');
    expect(await kubeRequest(as(grace), 'POST', models(), routed('graces-router', 'bind-restricted'))).toMatchObject({ status: 201 });
  });
});
