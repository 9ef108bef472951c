import { defaultPassthroughModel, passthroughModelAdmission } from '../../../src/webhook/passthroughmodel';
import { clusterState, context, operatorNamespace, passthroughModel, request } from './fixtures';

// Alice may read the provider key the fixture model names.
const readable = (overrides: Parameters<typeof clusterState>[0] = {}) => clusterState({ readableSecrets: [`alice/${operatorNamespace}/openai-key`], ...overrides });

describe('PassthroughModel admission', () => {
  it('allows a provider in the managed operator namespace', async () => {
    expect(await passthroughModelAdmission.validate(request(passthroughModel()), context(readable()))).toEqual({ denials: [], warnings: [], code: 422 });
  });

  describe('routing to another model needs bind on it (its provider answers with its credential)', () => {
    // A backup model alice may bind, and a restricted one whose key she may not read or use.
    const backup = { kind: 'PassthroughModel' as const, namespace: operatorNamespace, name: 'backup', spec: { models: { declared: ['gpt-backup'] } } };
    const secret = { kind: 'PassthroughModel' as const, namespace: operatorNamespace, name: 'secret-provider', spec: { models: { declared: ['gpt-secret'] } } };
    const state = () => readable({ models: [backup, secret], bindableModels: [`alice/${operatorNamespace}/PassthroughModel/backup`] });

    it('admits a fallback the user may bind, and refuses one they may not, naming the field and the Role to grant', async () => {
      const ok = await passthroughModelAdmission.validate(request(passthroughModel({}, { routing: { fallback: [{ name: 'backup', model: 'gpt-backup' }] } })), context(state()));
      expect(ok.denials).toEqual([]);
      const refused = await passthroughModelAdmission.validate(request(passthroughModel({}, { routing: { split: [{ name: 'secret-provider', weight: 10, model: 'gpt-secret' }] } })), context(state()));
      expect(refused.code).toBe(403);
      expect(refused.denials).toEqual([
        `spec.routing.split[0].name: user "alice" may not route requests to PassthroughModel "secret-provider", whose provider would answer them with its credential; ask an administrator for the verb "bind" on it (a Role in namespace "${operatorNamespace}" with apiGroups [llm.nebari.dev], resources [passthroughmodels], resourceNames [secret-provider], verbs [bind]), or remove it`,
      ]);
    });

    it('reviews only targets an update adds, and fails closed when the review cannot be made', async () => {
      const old = passthroughModel({}, { routing: { fallback: [{ name: 'secret-provider', model: 'gpt-secret' }] } });
      const ctx = context(state());
      const kept = await passthroughModelAdmission.validate(request(passthroughModel({}, { routing: { fallback: [{ name: 'secret-provider', model: 'gpt-secret' }, { name: 'backup', model: 'gpt-backup' }] } }), { operation: 'UPDATE', oldObject: old }), ctx);
      expect(kept.denials).toEqual([]);
      expect(ctx.lookups.reviews.filter((r) => r.startsWith('bind:'))).toEqual([`bind:alice/${operatorNamespace}/PassthroughModel/backup`]);
      const failing = await passthroughModelAdmission.validate(request(passthroughModel({}, { routing: { fallback: [{ name: 'backup', model: 'gpt-backup' }] } })), context({ ...state(), failing: { userMayBindModel: new Error('boom') } }));
      expect(failing.code).toBe(403);
      expect(failing.denials).toEqual([expect.stringContaining('whether user "alice" may route requests to PassthroughModel "backup"')]);
    });
  });

  describe('credential Secret guard (SubjectAccessReview as the requesting user)', () => {
    it('denies a create by a user who may not get the credential Secret', async () => {
      const verdict = await passthroughModelAdmission.validate(request(passthroughModel()), context());
      expect(verdict.code).toBe(403);
      expect(verdict.denials).toEqual([
        `spec.provider.credential.secretRef.name: user "alice" may not get Secret "openai-key" in namespace "${operatorNamespace}", so the model may not use it either; reference a Secret you can read, or ask an administrator for get access to it`,
      ]);
    });

    it('denies when the review cannot be made (fail closed)', async () => {
      const verdict = await passthroughModelAdmission.validate(request(passthroughModel()), context(readable({ failing: { userMayGet: new Error('SubjectAccessReview failed: API server answered 503') } })));
      expect(verdict.code).toBe(403);
      expect(verdict.denials.join('\n')).toContain('SubjectAccessReview failed');
    });

    it('re-checks an update that points the key at another host, as the user making it', async () => {
      const old = passthroughModel();
      const ctx = context();
      const verdict = await passthroughModelAdmission.validate(request(passthroughModel({ hostname: 'collector.attacker.example' }), { operation: 'UPDATE', oldObject: old, user: 'mallory' }), ctx);
      expect(verdict.code).toBe(403);
      expect(ctx.lookups.reviews).toEqual([`mallory/${operatorNamespace}/openai-key`]);
    });

    it('does not review an update that keeps the Secret and the host (the operator\'s finalizer and status writes)', async () => {
      const ctx = context();
      const old = passthroughModel();
      const verdict = await passthroughModelAdmission.validate(request(passthroughModel({}, { access: { public: true } }), { operation: 'UPDATE', oldObject: old, user: 'system:serviceaccount:x:operator' }), ctx);
      expect(verdict.denials).toEqual([]);
      expect(ctx.lookups.reviews).toEqual([]);
    });
  });

  it.each([
    ['another namespace', passthroughModel({}, {}, { namespace: 'team' }), clusterState(), 'metadata.namespace: "team" is not the operator namespace; create the PassthroughModel in'],
    [
      'a name an LLMModel uses',
      passthroughModel(),
      clusterState({ models: [{ kind: 'LLMModel', namespace: operatorNamespace, name: 'openai', spec: {} }] }),
      'metadata.name: an LLMModel named "openai" already exists in "nebari-llm-serving-system" and both would use the API-key Secret "openai-api-keys"',
    ],
    ['a hostname with a port', passthroughModel({ hostname: 'Api.OpenAI.com:443' }), clusterState(), 'spec.provider.hostname: "Api.OpenAI.com:443" has a port; put the port in spec.provider.port'],
    ['a label longer than 63', passthroughModel({ hostname: `${'a'.repeat(64)}.example.com` }), clusterState(), 'longer than 63 characters'],
    ['a duplicate model id', passthroughModel({}, { models: { declared: ['a', 'b', 'a'] } }), clusterState(), 'spec.models.declared[2]: "a" is already listed at spec.models.declared[0]; remove the duplicate'],
    ['a blank model id', passthroughModel({}, { models: { declared: ['  '] } }), clusterState(), 'spec.models.declared[0]: the model id is blank'],
    ['a padded model id', passthroughModel({}, { models: { declared: [' gpt'] } }), clusterState(), 'spec.models.declared[0]: " gpt" has leading or trailing whitespace'],
    ['a missing credential', passthroughModel({ credential: undefined }), clusterState(), 'spec.provider.credential.secretRef.name: is required for the OpenAI backend'],
  ])('denies %s', async (_case, model, state, message) => {
    const verdict = await passthroughModelAdmission.validate(request(model), context(state));
    expect(verdict.denials.join('\n')).toContain(message);
  });

  it.each([
    [passthroughModel({ hostname: 'API.OpenAI.com.' }), 'spec.provider.hostname: "API.OpenAI.com." is used as "api.openai.com"'],
    [passthroughModel({ port: 80 }), 'spec.provider.port: 80 usually serves plain HTTP'],
    [passthroughModel({}, { access: { public: true, groups: ['x'] } }), 'spec.access.groups is ignored'],
  ])('warns (%#)', async (model, warning) => {
    const verdict = await passthroughModelAdmission.validate(request(model), context(readable()));
    expect(verdict.denials).toEqual([]);
    expect(verdict.warnings.join('\n')).toContain(warning);
  });

  it('defaults the credential type from the backend and Anthropic\'s host', () => {
    const openai = passthroughModel();
    defaultPassthroughModel(openai);
    expect(openai.spec.provider.credential).toEqual({ type: 'APIKey', secretRef: { name: 'openai-key' } });

    const bedrock = passthroughModel({ hostname: undefined, credential: undefined, backend: { type: 'Bedrock', bedrock: { region: 'us-east-1' } } });
    defaultPassthroughModel(bedrock);
    expect(bedrock.spec.provider.credential).toEqual({ type: 'WorkloadIdentity' });
    expect(bedrock.spec.provider.hostname).toBeUndefined();

    const anthropic = passthroughModel({ hostname: undefined, backend: { type: 'Anthropic' } });
    defaultPassthroughModel(anthropic);
    expect(anthropic.spec.provider.hostname).toBe('api.anthropic.com');

    const explicit = passthroughModel({ credential: { type: 'APIKey' }, hostname: 'x.example.com' });
    defaultPassthroughModel(explicit);
    expect(explicit.spec.provider).toEqual(passthroughModel({ credential: { type: 'APIKey' }, hostname: 'x.example.com' }).spec.provider);
  });
});
