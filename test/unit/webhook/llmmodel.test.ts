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
