import { apiKeyInfoLabels, API_KEY_INFO_LABELS } from '../../../../src/translate/keys/key-info';
import type { ApiKeyRecord, ModelRef } from '../../../../src/translate/keys/api-keys';

const model: ModelRef = { kind: 'PassthroughModel', name: 'alpha', namespace: 'llm' };

describe('apiKeyInfoLabels', () => {
  it('describes each key by its client ID, owner, granting groups (sorted, comma-joined), tier, source and model', () => {
    const records: ApiKeyRecord[] = [
      { clientId: 'c-1', createdBy: 'ana', createdAt: '2026-01-01T00:00:00Z', groups: ['team-g', 'team-a'], tier: 'gold', source: 'portal' },
      { clientId: 'c-2', createdBy: 'unknown', createdAt: '' },
    ];
    expect(apiKeyInfoLabels(model, records)).toEqual([
      { client_id: 'c-1', namespace: 'llm', model: 'alpha', model_kind: 'PassthroughModel', owner: 'ana', groups: 'team-a,team-g', tier: 'gold', source: 'portal' },
      { client_id: 'c-2', namespace: 'llm', model: 'alpha', model_kind: 'PassthroughModel', owner: 'unknown', groups: '', tier: '', source: '' },
    ]);
  });

  it('gives every label the metric declares, and no other', () => {
    const [labels] = apiKeyInfoLabels(model, [{ clientId: 'c', createdBy: 'bo', createdAt: '' }]);
    expect(Object.keys(labels).sort()).toEqual([...API_KEY_INFO_LABELS].sort());
  });
});
