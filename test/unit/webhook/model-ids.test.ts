// One model id, one model per endpoint (issue 29, Low): a model that would declare an id another
// model of the namespace already serves on the same endpoint is refused, naming the other model
// and the fix; the operator's own status and finalizer writes never look the models up.
import { llmModelAdmission } from '../../../src/webhook/llmmodel';
import { passthroughModelAdmission } from '../../../src/webhook/passthroughmodel';
import { duplicateModelIds } from '../../../src/translate/gateway/served-ids';
import { clusterState, context, llmModel, operatorNamespace, passthroughModel, request } from './fixtures';

const readable = (models: ReturnType<typeof clusterState>['models']) =>
  clusterState({ models, readableSecrets: [`alice/${operatorNamespace}/openai-key`, `alice/${operatorNamespace}/azure-key`] });
const served = (kind: 'LLMModel' | 'PassthroughModel', name: string, spec: unknown) => ({ kind, namespace: operatorNamespace, name, spec });

describe('duplicate model ids', () => {
  it('refuses a PassthroughModel declaring an id another PassthroughModel serves, naming it and the fix', async () => {
    const ctx = context(readable([served('PassthroughModel', 'openai', { models: { declared: ['gpt-4o', 'gpt-4o-mini'] } })]));
    const verdict = await passthroughModelAdmission.validate(request(passthroughModel({ credential: { secretRef: { name: 'azure-key' } } }, { models: { declared: ['gpt-4o'] } }, { name: 'azure' })), ctx);
    expect(verdict.denials).toEqual([
      `spec.models.declared: model id "gpt-4o" is already served on the external endpoint by PassthroughModel openai in "${operatorNamespace}"; two models with one id would take turns getting its requests as they are re-created. Choose another id, or remove "gpt-4o" from PassthroughModel openai first`,
      `spec.models.declared: model id "gpt-4o" is already served on the internal endpoint by PassthroughModel openai in "${operatorNamespace}"; two models with one id would take turns getting its requests as they are re-created. Choose another id, or remove "gpt-4o" from PassthroughModel openai first`,
    ]);
  });

  it('refuses an LLMModel whose served name a PassthroughModel declares', async () => {
    const ctx = context(readable([served('PassthroughModel', 'proxy', { models: { declared: ['Qwen/Qwen3-0.6B'] }, endpoints: { internal: { enabled: false } } })]));
    const verdict = await llmModelAdmission.validate(request(llmModel()), ctx);
    expect(verdict.denials).toEqual([expect.stringContaining('spec.model.name: model id "Qwen/Qwen3-0.6B" is already served on the external endpoint by PassthroughModel proxy')]);
  });

  it('allows the same id on different endpoints, and an update that does not change ids without a lookup', async () => {
    const internalOnly = served('PassthroughModel', 'openai', { models: { declared: ['gpt-4o'] }, endpoints: { external: { enabled: false } } });
    const mine = passthroughModel({ credential: { secretRef: { name: 'azure-key' } } }, { models: { declared: ['gpt-4o'] }, endpoints: { internal: { enabled: false } } }, { name: 'azure' });
    expect((await passthroughModelAdmission.validate(request(mine), context(readable([internalOnly])))).denials).toEqual([]);
    const failing = context(clusterState({ failing: { listModels: new Error('API server answered 503') } }));
    const statusWrite = await passthroughModelAdmission.validate(request(mine, { operation: 'UPDATE', oldObject: mine }), failing);
    expect(statusWrite.denials).toEqual([]);
  });

  it('admits with a warning when the models cannot be listed (a write during an upgrade must not fail; the operator\'s ModelIdConflict is the backstop)', async () => {
    const verdict = await passthroughModelAdmission.validate(request(passthroughModel()), context(clusterState({ readableSecrets: [`alice/${operatorNamespace}/openai-key`], failing: { listModels: new Error('API server answered 503') } })));
    expect(verdict.denials).toEqual([]);
    expect(verdict.warnings.join('\n')).toContain('could not check which model ids the models in');
    expect(verdict.warnings.join('\n')).toContain('admitted unchecked: the operator reports ModelIdConflict');
  });

  it('ignores the model itself and models being deleted', () => {
    const me = { kind: 'PassthroughModel', metadata: { name: 'a' }, spec: { models: { declared: ['x'] } } };
    expect(duplicateModelIds(me, [me, { ...me, metadata: { name: 'b', deletionTimestamp: '2026-01-01T00:00:00Z' } }])).toEqual([]);
    expect(duplicateModelIds(me, [{ ...me, metadata: { name: 'b' } }]).map((d) => d.other)).toEqual(['PassthroughModel b', 'PassthroughModel b']);
  });
});
