import { modelKeyOnClientIdChange, withoutData } from '../../../src/operator/api-key-objects';
import type { KubeObject } from '../../../src/kube/rest';

const secret = (data?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'gpt-api-keys', namespace: 'team', annotations: { 'llm.nebari.dev/model-name': 'gpt' } },
  ...(data ? { data } : {}),
});

describe('key Secrets in the informer cache', () => {
  it('keeps client IDs but never key values', () => {
    const cached = withoutData(secret({ 'user-b-1': 'c2stYmJi', 'user-a-1': 'c2stYWFh' }));
    expect(cached).not.toHaveProperty('data');
    expect(cached).toMatchObject({ clientIds: ['user-a-1', 'user-b-1'] });
    expect(JSON.stringify(cached)).not.toContain('c2st');
  });

  it('re-reconciles the model only when the set of client IDs changes', () => {
    const empty = withoutData(secret());
    const one = withoutData(secret({ a: 'eA==' }));
    const oneRotated = withoutData(secret({ a: 'eQ==' }));
    expect(modelKeyOnClientIdChange(empty, 'add')).toEqual([]);
    expect(modelKeyOnClientIdChange(one, 'add')).toEqual(['team/gpt']);
    expect(modelKeyOnClientIdChange(one, 'update', empty)).toEqual(['team/gpt']);
    expect(modelKeyOnClientIdChange(oneRotated, 'update', one)).toEqual([]);
    expect(modelKeyOnClientIdChange(empty, 'update', one)).toEqual(['team/gpt']);
    expect(modelKeyOnClientIdChange(one, 'delete')).toEqual(['team/gpt']);
  });
});
