import { agentDeploymentAdmission, defaultAgentDeployment, referencedSecrets } from '../../../src/webhook/agentdeployment';
import { agentDeployment, clusterState, context, memoryLookups, request } from './fixtures';

const readable = clusterState({ readableSecrets: ['alice/team/openai'] });

describe('AgentDeployment admission', () => {
  it('allows an agent whose user may read the credentials Secret, and asks the reviewer as that user', async () => {
    const ctx = context(readable);
    expect(await agentDeploymentAdmission.validate(request(agentDeployment()), ctx)).toEqual({ denials: [], warnings: [], code: 422 });
    expect(ctx.lookups.reviews).toEqual(['alice/team/openai']);
  });

  it('denies an agent in a namespace the installation does not watch, without any lookup', async () => {
    const ctx = context(readable);
    const agent = agentDeployment();
    agent.metadata!.namespace = 'elsewhere';
    const verdict = await agentDeploymentAdmission.validate(request(agent), ctx);
    expect(verdict.denials).toEqual([
      'metadata.namespace: "elsewhere" is not watched by this installation, so nothing would run the agent; create the AgentDeployment in "nebari-llm-serving-system", "team", or add "elsewhere" to the chart value watchNamespaces (the namespace then gets the operator\'s Role)',
    ]);
    expect(ctx.lookups.reviews).toEqual([]);
  });

  it('denies with 403 when the requesting user may not get the Secret (confused deputy)', async () => {
    const verdict = await agentDeploymentAdmission.validate(request(agentDeployment(), { user: 'mallory' }), context(readable));
    expect(verdict.code).toBe(403);
    expect(verdict.denials).toEqual([
      'spec.model.externalAPI.credentialsRef.name: user "mallory" may not get Secret "openai" in namespace "team", so the agent may not use it either; reference a Secret you can read, or ask an administrator for get access to it',
    ]);
  });

  it('fails closed when the access review cannot be made', async () => {
    const verdict = await agentDeploymentAdmission.validate(
      request(agentDeployment()),
      context(clusterState({ failing: { userMayGet: new Error('SubjectAccessReview failed: API server answered 503') } })),
    );
    expect(verdict.code).toBe(403);
    expect(verdict.denials[0]).toContain('could not check whether user "alice" may get Secret "openai"');
  });

  it('reviews on every UPDATE, even when the reference did not change', async () => {
    const ctx = context(readable);
    const agent = agentDeployment();
    await agentDeploymentAdmission.validate(request(agent, { operation: 'UPDATE', oldObject: agent, user: 'bob' }), ctx);
    expect(ctx.lookups.reviews).toEqual(['bob/team/openai']);
  });

  it('also reviews Secrets mounted through env valueFrom', async () => {
    const agent = agentDeployment({ container: { image: 'registry.example.com/agent:1.0', env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } }] } });
    expect(referencedSecrets(agent).map((s) => s.field)).toEqual([
      'spec.model.externalAPI.credentialsRef.name',
      'spec.container.env[0].valueFrom.secretKeyRef.name',
    ]);
    const verdict = await agentDeploymentAdmission.validate(request(agent), context(readable));
    expect(verdict.denials).toEqual([expect.stringContaining('spec.container.env[0].valueFrom.secretKeyRef.name: user "alice" may not get Secret "db"')]);
  });

  it.each([
    ['a name that is not a DNS-1035 label', agentDeployment({}, { name: '1agent' }), 'metadata.name: "1agent" is not a DNS-1035 label'],
    ['a name longer than 63', agentDeployment({}, { name: `a${'b'.repeat(63)}` }), 'is not a DNS-1035 label (at most 63'],
    [
      'a baseURL with credentials',
      agentDeployment({ model: { externalAPI: { type: 'openai', baseURL: 'https://k:s@api.openai.com', modelName: 'm', credentialsRef: { name: 'openai' } } } }),
      'spec.model.externalAPI.baseURL: "https://k:s@api.openai.com" contains a user name or password',
    ],
    [
      'a relative baseURL',
      agentDeployment({ model: { externalAPI: { type: 'openai', baseURL: 'api.openai.com', modelName: 'm', credentialsRef: { name: 'openai' } } } }),
      'spec.model.externalAPI.baseURL: "api.openai.com" is not an absolute URL',
    ],
    ['a bad OTLP endpoint', agentDeployment({ observability: { otlp: { endpoint: 'collector:4317' } } }), 'spec.observability.otlp.endpoint: "collector:4317"'],
    [
      'overrides outside the allow-list',
      { ...agentDeployment(), spec: { ...agentDeployment().spec, overrides: { workload: { hostPID: true } } } },
      'spec.overrides.workload.hostPID: is not allowed',
    ],
    ['a missing model', agentDeployment({ model: { modelRef: { kind: 'LLMModel', name: 'qwen' } } }), 'spec.model.modelRef.name: LLMModel "qwen" does not exist in namespace "team"; create it first or fix the reference'],
  ])('denies %s', async (_case, agent, message) => {
    const verdict = await agentDeploymentAdmission.validate(request(agent), context(readable));
    expect(verdict.denials.join('\n')).toContain(message);
  });

  const withModels = clusterState({
    models: [
      { kind: 'LLMModel', namespace: 'team', name: 'qwen', spec: { model: { name: 'Qwen/Qwen3-0.6B' }, access: { public: true } } },
      { kind: 'PassthroughModel', namespace: 'team', name: 'openai', spec: { models: { declared: ['gpt-4o'] }, access: { public: true } } },
      { kind: 'PassthroughModel', namespace: 'team', name: 'restricted', spec: { models: { declared: ['gpt-4o'] }, access: { groups: ['ml-team'] } } },
    ],
    bindableModels: ['alice/team/PassthroughModel/restricted'],
  });

  // The operator mints the agent a key its author can read: binding a restricted model needs RBAC verb `bind` on it.
  describe('binding a restricted model (issue 29, Medium 4)', () => {
    const toRestricted = agentDeployment({ model: { modelRef: { kind: 'PassthroughModel', name: 'restricted', modelName: 'gpt-4o' } } });

    it('allows a user who may bind the model, asking the reviewer as that user', async () => {
      const ctx = context(withModels);
      expect((await agentDeploymentAdmission.validate(request(toRestricted), ctx)).denials).toEqual([]);
      expect(ctx.lookups.reviews).toContain('bind:alice/team/PassthroughModel/restricted');
    });

    it('denies with 403 a user who may create the agent but not bind the model, naming the verb to grant', async () => {
      const verdict = await agentDeploymentAdmission.validate(request(toRestricted, { user: 'mallory' }), context(withModels));
      expect(verdict.code).toBe(403);
      expect(verdict.denials).toEqual([
        'spec.model.modelRef.name: PassthroughModel "restricted" is restricted (not spec.access.public) and user "mallory" may not bind agents to it, since the agent gets an API key for it; ' +
          'ask an administrator for the verb "bind" on it (a Role in namespace "team" with apiGroups [llm.nebari.dev], resources [passthroughmodels], resourceNames [restricted], verbs [bind]), or bind a public model',
      ]);
    });

    it('denies when re-pointing an existing agent to the restricted model, and fails closed when the review fails', async () => {
      const before = agentDeployment({ model: { modelRef: { kind: 'PassthroughModel', name: 'openai', modelName: 'gpt-4o' } } });
      const repoint = await agentDeploymentAdmission.validate(request(toRestricted, { user: 'mallory', operation: 'UPDATE', oldObject: before }), context(withModels));
      expect(repoint.denials).toEqual([expect.stringContaining('user "mallory" may not bind agents to it')]);
      const failing = await agentDeploymentAdmission.validate(request(toRestricted), context({ ...withModels, failing: { userMayBindModel: new Error('boom') } }));
      expect(failing.code).toBe(403);
      expect(failing.denials).toEqual([expect.stringContaining('whether user "alice" may bind agents to PassthroughModel "restricted"')]);
    });

    it('does not review public models', async () => {
      const ctx = context(withModels);
      await agentDeploymentAdmission.validate(request(agentDeployment({ model: { modelRef: { kind: 'LLMModel', name: 'qwen' } } }), { user: 'mallory' }), ctx);
      expect(ctx.lookups.reviews.filter((r) => r.startsWith('bind:'))).toEqual([]);
    });
  });

  it('allows a reference to an existing model and warns about ids it does not serve', async () => {
    const fine = await agentDeploymentAdmission.validate(request(agentDeployment({ model: { modelRef: { kind: 'LLMModel', name: 'qwen' } } })), context(withModels));
    expect(fine).toEqual({ denials: [], warnings: [], code: 422 });
    const mismatch = await agentDeploymentAdmission.validate(
      request(agentDeployment({ model: { modelRef: { kind: 'PassthroughModel', name: 'openai', modelName: 'gpt-5' } } })),
      context(withModels),
    );
    expect(mismatch.denials).toEqual([]);
    expect(mismatch.warnings).toEqual([expect.stringContaining('"gpt-5" is not declared by PassthroughModel "openai" (gpt-4o)')]);
  });

  it('does not re-check an unchanged model reference on UPDATE', async () => {
    const agent = agentDeployment({ model: { modelRef: { kind: 'LLMModel', name: 'gone' } } });
    const verdict = await agentDeploymentAdmission.validate(request(agent, { operation: 'UPDATE', oldObject: agent }), context());
    expect(verdict.denials).toEqual([]);
  });

  it('warns when an external API has no credentials', async () => {
    const agent = agentDeployment({ model: { externalAPI: { type: 'anthropic', baseURL: 'https://api.anthropic.com', modelName: 'claude' } } });
    const verdict = await agentDeploymentAdmission.validate(request(agent), context());
    expect(verdict.warnings).toEqual([expect.stringContaining('spec.model.externalAPI.credentialsRef is not set')]);
  });

  it('defaults replicas for deployment agents and the model id of a referenced LLMModel', async () => {
    const agent = agentDeployment({ model: { modelRef: { kind: 'LLMModel', name: 'qwen' } } });
    await defaultAgentDeployment(agent, 'team', memoryLookups(withModels));
    expect(agent.spec.replicas).toBe(1);
    expect(agent.spec.model.modelRef?.modelName).toBe('Qwen/Qwen3-0.6B');

    const job = agentDeployment({ lifecycle: 'job' });
    await defaultAgentDeployment(job, 'team', memoryLookups(withModels));
    expect(job.spec.replicas).toBeUndefined();

    const missing = agentDeployment({ model: { modelRef: { kind: 'LLMModel', name: 'nope' } } });
    await defaultAgentDeployment(missing, 'team', memoryLookups(clusterState({ failing: { getModel: new Error('down') } })));
    expect(missing.spec.model.modelRef?.modelName).toBeUndefined();
  });
});

describe('AgentDeployment pods: valueFrom kinds and images', () => {
  it('reviews configMapKeyRef as the requesting user and refuses kinds it cannot review', async () => {
    const agent = agentDeployment({
      container: {
        image: 'registry.example.com/agent:1.0',
        env: [
          { name: 'C', valueFrom: { configMapKeyRef: { name: 'settings', key: 'k' } } },
          { name: 'F', valueFrom: { fileKeyRef: { volumeName: 'v', path: 'p', key: 'k' } } },
        ],
      },
    });
    const verdict = await agentDeploymentAdmission.validate(request(agent), context(readable));
    expect(verdict.denials).toEqual(
      expect.arrayContaining([
        expect.stringContaining('spec.container.env[1].valueFrom.fileKeyRef: cannot be checked'),
        expect.stringContaining('spec.container.env[0].valueFrom.configMapKeyRef.name: user "alice" may not get ConfigMap "settings" in namespace "team"'),
      ]),
    );
  });

  it('enforces the image allow-list on spec.container.image', async () => {
    const ctx = { ...context(readable), allowedImages: ['registry.internal/'] };
    const verdict = await agentDeploymentAdmission.validate(request(agentDeployment()), ctx);
    expect(verdict.denials).toEqual([expect.stringContaining('spec.container.image: image "registry.example.com/agent:1.0" is not allowed by this installation')]);
  });
});
