import { defaultLLMModel, effectiveSubdomain, llmModelAdmission, llmModelNameProblem } from '../../../src/webhook/llmmodel';
import { clusterState, context, llmModel, operatorNamespace, request } from './fixtures';

describe('LLMModel admission', () => {
  it('allows a model in the managed operator namespace without warnings', async () => {
    expect(await llmModelAdmission.validate(request(llmModel()), context())).toEqual({ denials: [], warnings: [], code: 422 });
  });

  it('reviews the Hugging Face token Secret as the requesting user', async () => {
    const gated = llmModel({ model: { name: 'meta-llama/Llama-3.1-8B', source: 'huggingface', authSecretName: 'hf-token' } });
    const denied = await llmModelAdmission.validate(request(gated), context());
    expect(denied.code).toBe(403);
    expect(denied.denials).toEqual([
      `spec.model.authSecretName: user "alice" may not get Secret "hf-token" in namespace "${operatorNamespace}", so the model may not use it either; reference a Secret you can read, or ask an administrator for get access to it`,
    ]);
    const allowed = await llmModelAdmission.validate(request(gated), context(clusterState({ readableSecrets: [`alice/${operatorNamespace}/hf-token`] })));
    expect(allowed.denials).toEqual([]);
  });

  it('allows a model in the operator namespace without any namespace label (helm --create-namespace)', async () => {
    const verdict = await llmModelAdmission.validate(request(llmModel()), context(clusterState({ namespaces: { [operatorNamespace]: {} } })));
    expect(verdict.denials).toEqual([]);
  });

  it.each([
    ['another namespace', llmModel({}, { namespace: 'team' }), clusterState(), 'metadata.namespace: "team" is not the operator namespace; create the LLMModel in "nebari-llm-serving-system"'],
    [
      'a name a PassthroughModel uses',
      llmModel(),
      clusterState({ models: [{ kind: 'PassthroughModel', namespace: operatorNamespace, name: 'qwen', spec: {} }] }),
      'metadata.name: a PassthroughModel named "qwen" already exists in "nebari-llm-serving-system" and both would use the API-key Secret "qwen-api-keys"; choose another name',
    ],
    [
      'a subdomain longer than a DNS label',
      llmModel({ endpoints: { external: { subdomain: 'a'.repeat(64) } as never } }),
      clusterState(),
      'spec.endpoints.external.subdomain: the endpoint subdomain "aaaa',
    ],
    [
      'a long dotted name without subdomain',
      llmModel({}, { name: `${'a'.repeat(40)}.${'b'.repeat(30)}` }),
      clusterState(),
      'metadata.name: the endpoint subdomain',
    ],
  ])('denies %s', async (_case, model, state, message) => {
    const verdict = await llmModelAdmission.validate(request(model), context(state));
    expect(verdict.denials.join('\n')).toContain(message);
  });

  it('denies a resource quantity that is not above zero, naming the entry (a check the CRD leaves to the webhook)', async () => {
    const model = llmModel({ resources: { gpu: { count: 1 }, requests: { cpu: '-1', memory: '0.0Mi' }, limits: { memory: 0, cpu: '+.5' } } as never });
    const verdict = await llmModelAdmission.validate(request(model), context());
    expect(verdict.denials).toEqual([
      'spec.resources.requests[cpu]: "-1" is not above zero; every quantity must be above zero, such as 500m for cpu or 1Gi for memory; set a positive value or remove the entry',
      'spec.resources.requests[memory]: "0.0Mi" is not above zero; every quantity must be above zero, such as 500m for cpu or 1Gi for memory; set a positive value or remove the entry',
      'spec.resources.limits[memory]: 0 is not above zero; every quantity must be above zero, such as 500m for cpu or 1Gi for memory; set a positive value or remove the entry',
    ]);
  });

  it('does not check again a resource quantity an UPDATE leaves unchanged (as the API server ratchets CRD rules)', async () => {
    const stored = llmModel({ resources: { gpu: { count: 1 }, limits: { memory: 0 } } as never });
    const unchanged = await llmModelAdmission.validate(request(stored, { operation: 'UPDATE', oldObject: stored }), context());
    expect(unchanged.denials).toEqual([]);
    const changed = llmModel({ resources: { gpu: { count: 1 }, limits: { memory: 0, cpu: '0m' } } as never });
    const verdict = await llmModelAdmission.validate(request(changed, { operation: 'UPDATE', oldObject: stored }), context());
    expect(verdict.denials).toEqual([expect.stringContaining('spec.resources.limits[cpu]: "0m" is not above zero')]);
  });

  it('fails closed with 503 when a lookup fails', async () => {
    const verdict = await llmModelAdmission.validate(request(llmModel()), context(clusterState({ failing: { getModel: new Error('boom') } })));
    expect(verdict.code).toBe(503);
    expect(verdict.denials[0]).toContain('could not check whether a PassthroughModel named "qwen" exists (boom)');
  });

  it('checks placement only on CREATE, so updates of existing objects are never blocked by it', async () => {
    const model = llmModel({}, { namespace: 'team' });
    const verdict = await llmModelAdmission.validate(request(model, { operation: 'UPDATE', oldObject: model }), context());
    expect(verdict.denials).toEqual([]);
  });

  it.each([
    [{ model: { name: 'm', source: 'huggingface', storage: { type: 'emptyDir' }, preload: true } }, 'spec.model.storage.type: emptyDir with spec.model.preload downloads the whole model again'],
    [{ model: { name: 'm', source: 'huggingface', image: 'x' } }, 'spec.model.image is ignored when spec.model.source is huggingface'],
    [{ model: { name: 'm', source: 'oci', image: 'x', revision: 'main' } }, 'spec.model.revision and spec.model.authSecretName apply to Hugging Face downloads only'],
    [{ access: { public: true, groups: ['a'] } }, 'spec.access.groups is ignored because spec.access.public is true'],
    [{ serving: { tensorParallelism: 2 } }, 'tensorParallelism × dataParallelism is 2 but spec.resources.gpu.count is 1'],
    [{ serving: { updateStrategy: 'RollingUpdate' } }, 'RollingUpdate starts the new pod before the old one stops'],
  ])('warns about %j', async (spec, warning) => {
    const verdict = await llmModelAdmission.validate(request(llmModel(spec as never)), context());
    expect(verdict.denials).toEqual([]);
    expect(verdict.warnings.join('\n')).toContain(warning);
  });

  it('defaults tensor parallelism to the GPU count', () => {
    const model = llmModel({ resources: { gpu: { count: 4, type: 'nvidia' } }, serving: { replicas: 2 } });
    defaultLLMModel(model);
    expect(model.spec.serving).toEqual({ replicas: 2, tensorParallelism: 4 });

    const explicit = llmModel({ resources: { gpu: { count: 4, type: 'nvidia' } }, serving: { tensorParallelism: 2 } });
    defaultLLMModel(explicit);
    expect(explicit.spec.serving?.tensorParallelism).toBe(2);

    const cpu = llmModel({ resources: { gpu: { count: 0, type: 'nvidia' } } });
    defaultLLMModel(cpu);
    expect(cpu.spec.serving).toBeUndefined();
  });

  it('does not default tensor parallelism for KAITO, which sets it from the node and refuses the field', () => {
    const kaito = llmModel({ resources: { gpu: { count: 2, type: 'nvidia' } }, provider: { name: 'kaito' } });
    defaultLLMModel(kaito);
    expect(kaito.spec.serving).toBeUndefined();
    const kuberay = llmModel({ resources: { gpu: { count: 2, type: 'nvidia' } }, provider: { name: 'kuberay' } });
    defaultLLMModel(kuberay);
    expect(kuberay.spec.serving).toEqual({ tensorParallelism: 2 });
    const unknown = llmModel({ resources: { gpu: { count: 2, type: 'nvidia' } }, provider: { name: 'nope' as never } });
    defaultLLMModel(unknown);
    expect(unknown.spec.serving).toBeUndefined();
  });

  it('leaves malformed objects to schema validation when defaulting', () => {
    const model = llmModel({ resources: { gpu: { count: 'two' } } as never, serving: 'fast' as never });
    defaultLLMModel(model);
    expect(model.spec.serving).toBe('fast');
  });

  it('derives the subdomain from the name unless set', () => {
    expect(effectiveSubdomain(llmModel({}, { name: 'org.model' }))).toEqual({ value: 'org-model', field: 'metadata.name' });
    expect(effectiveSubdomain(llmModel({ endpoints: { external: { subdomain: 'x' } as never } }))).toEqual({
      value: 'x',
      field: 'spec.endpoints.external.subdomain',
    });
  });
});

describe('LLMModel name: it becomes part of Service names (DNS-1035 labels)', () => {
  it.each([
    ['llama-3.1-8b', 'llama-3-1-8b'],
    ['3b-model', 'm-3b-model'],
    ['qwen.2.5', 'qwen-2-5'],
  ])('refuses %j on CREATE and suggests %j', async (name, suggestion) => {
    const verdict = await llmModelAdmission.validate(request(llmModel({}, { name })), context());
    expect(verdict.denials).toEqual([
      `metadata.name: "${name}" becomes part of the model's Service names (<name>-vllm, <name>-epp), which must be DNS-1035 labels: ` +
        `lower-case letters, digits and '-', starting with a letter (no '.'); rename the object, for example to "${suggestion}"`,
    ]);
  });

  it.each(['a', 'llama-3-1-8b', `l${'x'.repeat(62)}`])('allows %j', (name) => {
    expect(llmModelNameProblem(name)).toBeUndefined();
  });

  it('does not re-check the name on UPDATE, so a model admitted before the rule can still be deleted', async () => {
    const old = llmModel({}, { name: 'llama-3.1-8b' });
    const verdict = await llmModelAdmission.validate(request({ ...old, metadata: { ...old.metadata, finalizers: [] } }, { operation: 'UPDATE', oldObject: old }), context());
    expect(verdict.denials).toEqual([]);
  });
});

// docs/security.md: what a model author carries into the serving pods. Each of these was admitted
// before (issue 29's reproductions): the attacker's image received any Secret of the namespace.
describe('LLMModel pods: Secrets, provider overrides and images', () => {
  const attacker = 'mallory';
  const envModel = (env: unknown[], image = 'attacker.example/exfiltrate:1') => llmModel({ serving: { image, env } as never });
  const sessionKey = { name: 'PORTAL_KEY', valueFrom: { secretKeyRef: { name: 'nls-portal-session', key: 'key' } } };

  it('reviews spec.serving.env secretKeyRef as the requesting user (403 when they may not read it)', async () => {
    const verdict = await llmModelAdmission.validate(request(envModel([sessionKey]), { user: attacker }), context());
    expect(verdict.code).toBe(403);
    expect(verdict.denials).toEqual([
      `spec.serving.env[0].valueFrom.secretKeyRef.name: user "${attacker}" may not get Secret "nls-portal-session" in namespace "${operatorNamespace}", so the model may not use it either; reference a Secret you can read, or ask an administrator for get access to it`,
    ]);
    const allowed = await llmModelAdmission.validate(request(envModel([sessionKey]), { user: 'alice' }), context(clusterState({ readableSecrets: [`alice/${operatorNamespace}/nls-portal-session`] })));
    expect(allowed.denials).toEqual([]);
  });

  it('reviews configMapKeyRef the same way', async () => {
    const audit = { name: 'AUDIT', valueFrom: { configMapKeyRef: { name: 'nls-key-audit-2026-01-01', key: 'entries' } } };
    const verdict = await llmModelAdmission.validate(request(envModel([audit]), { user: attacker }), context());
    expect(verdict.denials).toEqual([expect.stringContaining(`spec.serving.env[0].valueFrom.configMapKeyRef.name: user "${attacker}" may not get ConfigMap "nls-key-audit-2026-01-01"`)]);
  });

  it('refuses valueFrom kinds it cannot review', async () => {
    const verdict = await llmModelAdmission.validate(request(envModel([{ name: 'F', valueFrom: { fileKeyRef: { volumeName: 'v', path: 'p', key: 'k' } } }])), context());
    expect(verdict.denials).toEqual([expect.stringContaining('spec.serving.env[0].valueFrom.fileKeyRef: cannot be checked against the requesting user\'s rights')]);
  });

  it('reviews the Secrets again when someone who may not read them changes the image (or anything else in the spec)', async () => {
    const state = clusterState({ readableSecrets: [`alice/${operatorNamespace}/hf-token`] });
    const stored = llmModel({ model: { name: 'Qwen/Qwen3-0.6B', source: 'huggingface', authSecretName: 'hf-token' }, serving: { image: 'vllm/vllm-openai:v0.10.0' } as never });
    const changed = llmModel({ ...stored.spec, serving: { image: 'attacker.example/exfiltrate:1' } as never });
    const byAttacker = await llmModelAdmission.validate(request(changed, { operation: 'UPDATE', oldObject: stored, user: attacker }), context(state));
    expect(byAttacker.code).toBe(403);
    expect(byAttacker.denials).toEqual([expect.stringContaining(`spec.model.authSecretName: user "${attacker}" may not get Secret "hf-token"`)]);
    const relabelled = { ...stored, metadata: { ...stored.metadata, labels: { team: 'a' } } };
    expect((await llmModelAdmission.validate(request(relabelled, { operation: 'UPDATE', oldObject: stored, user: attacker }), context(state))).denials).toEqual([]);
  });

  it.each([
    ['kuberay', { spec: { rayClusterConfig: { headGroupSpec: { template: { spec: { serviceAccountName: 'nls-operator' } } } } } }, 'serviceAccountName: is not allowed in kuberay overrides'],
    ['dynamo', { spec: { services: { VllmWorker: { extraPodSpec: { volumes: [{ name: 's', secret: { secretName: 'nls-portal-session' } }] } } } } }, 'extraPodSpec.volumes: is not allowed in dynamo overrides'],
    ['kaito', { inference: { template: { spec: { hostNetwork: true } } } }, 'spec.provider.overrides.inference.template: is not allowed in kaito overrides'],
  ])('refuses %s overrides outside the allow-list', async (provider, overrides, message) => {
    const model = llmModel({ provider: { name: provider as never, overrides }, serving: { image: 'registry.example.com/x:1' } as never });
    const verdict = await llmModelAdmission.validate(request(model), context());
    expect(verdict.denials.join('\n')).toContain(message);
  });

  it('reviews Secrets named in provider overrides as the requesting user', async () => {
    const model = llmModel({ provider: { name: 'dynamo', overrides: { spec: { envs: [sessionKey] } } }, serving: { image: 'registry.example.com/x:1' } as never });
    const verdict = await llmModelAdmission.validate(request(model, { user: attacker }), context());
    expect(verdict.denials).toEqual([expect.stringContaining(`spec.provider.overrides.spec.envs[0].valueFrom.secretKeyRef.name: user "${attacker}" may not get Secret "nls-portal-session"`)]);
  });

  it('enforces the image allow-list on spec.serving.image', async () => {
    const ctx = { ...context(), allowedImages: ['registry.example.com/'] };
    const refused = await llmModelAdmission.validate(request(envModel([])), ctx);
    expect(refused.denials).toEqual([expect.stringContaining('spec.serving.image: image "attacker.example/exfiltrate:1" is not allowed by this installation')]);
    expect((await llmModelAdmission.validate(request(envModel([], 'registry.example.com/vllm:1')), ctx)).denials).toEqual([]);
  });

  it('leaves a stored model\'s metadata updates (the operator\'s finalizer) alone, even when its spec predates the rules', async () => {
    const stored = llmModel({ provider: { name: 'kuberay', overrides: { spec: { rayClusterConfig: { headGroupSpec: { template: { spec: { hostNetwork: true } } } } } } } });
    const finalizer = { ...stored, metadata: { ...stored.metadata, finalizers: ['llm.nebari.dev/cleanup'] } };
    const ctx = { ...context(), allowedImages: ['registry.example.com/'] };
    expect((await llmModelAdmission.validate(request(finalizer, { operation: 'UPDATE', oldObject: stored }), ctx)).denials).toEqual([]);
  });
});
