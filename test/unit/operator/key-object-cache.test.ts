import { KeyObjectCache, modelKeyOnMetadataChange } from '../../../src/operator/key-object-cache';
import { withoutData } from '../../../src/operator/api-key-objects';
import { desiredApiKeyMetadataConfigMap, desiredApiKeySecret } from '../../../src/translate/keys/api-keys';
import type { CachedKind } from '../../../src/operator/runtime/cached-lookups';
import type { KubeObject } from '../../../src/kube/rest';

const model = { kind: 'PassthroughModel' as const, name: 'gpt', namespace: 'team' };

/** An informer's cache holding `objects` (what the watch's transform produced), listed or not. */
function cacheOf(objects: KubeObject[], hasSynced = true): CachedKind & { list(): KubeObject[] } {
  return { hasSynced, get: (_ns, name) => objects.find((o) => o.metadata.name === name), list: () => objects };
}

/** A KeyObjectCache whose two watches hold these objects (through the watches' own transforms). */
function cacheWith(secret: KubeObject | undefined, metadata: KubeObject | undefined, synced = true): KeyObjectCache {
  const cache = new KeyObjectCache('PassthroughModel');
  const secretWatch = cache.secretWatch('team');
  const metadataWatch = cache.metadataWatch('team');
  secretWatch.onCache!(cacheOf(secret ? [secretWatch.transform!(secret)] : [], synced));
  metadataWatch.onCache!(cacheOf(metadata ? [metadataWatch.transform!(metadata)] : [], synced));
  return cache;
}

const storedSecret = (data: Record<string, string>) => ({ ...desiredApiKeySecret(model), metadata: { ...desiredApiKeySecret(model).metadata, uid: 's1', resourceVersion: '5' }, data }) as KubeObject;
const storedMetadata = (data: Record<string, string>) => ({ ...desiredApiKeyMetadataConfigMap(model), metadata: { ...desiredApiKeyMetadataConfigMap(model).metadata, uid: 'c1', resourceVersion: '6' }, data }) as KubeObject;

describe('a model\'s key objects from the watches', () => {
  it('answers with the client IDs and the metadata records, never a key value', () => {
    const record = JSON.stringify({ createdBy: 'alice', grantedBy: 'groups', groups: ['ml-team'] });
    const read = cacheWith(storedSecret({ 'alice-1': 'c2stYWFh' }), storedMetadata({ 'alice-1': record }))!.current(model);
    expect(read).toEqual({ secretName: desiredApiKeySecret(model).metadata.name, clientIds: ['alice-1'], metadataData: { 'alice-1': record } });
    expect(JSON.stringify(read)).not.toContain('c2st');
  });

  it('answers nothing (the server is asked, the objects applied) until both watches listed, or when an object is missing or not as the operator applies it', () => {
    expect(cacheWith(storedSecret({}), storedMetadata({}), false).current(model)).toBeUndefined();
    expect(cacheWith(undefined, storedMetadata({})).current(model)).toBeUndefined();
    expect(cacheWith(storedSecret({}), undefined).current(model)).toBeUndefined();
    const relabelled = storedSecret({});
    relabelled.metadata.labels = { ...relabelled.metadata.labels, 'app.kubernetes.io/part-of': 'something-else' };
    expect(cacheWith(relabelled, storedMetadata({})).current(model)).toBeUndefined();
    const otherModel = storedMetadata({});
    otherModel.metadata.annotations = { 'llm.nebari.dev/model-name': 'other' };
    expect(cacheWith(storedSecret({}), otherModel).current(model)).toBeUndefined();
    const deleting = storedSecret({});
    deleting.metadata.deletionTimestamp = '2026-12-01T00:00:00Z';
    expect(cacheWith(deleting, storedMetadata({})).current(model)).toBeUndefined();
    expect(cacheWith(storedSecret({}), storedMetadata({})).current(model)).toBeDefined();
  });

  it('re-reconciles the model when the metadata data changes, not for the empty ConfigMap the operator creates', () => {
    const transform = new KeyObjectCache('PassthroughModel').metadataWatch('team').transform!;
    const empty = transform(storedMetadata({}));
    const one = transform(storedMetadata({ 'alice-1': '{}' }));
    expect(modelKeyOnMetadataChange(empty, 'add')).toEqual([]);
    expect(modelKeyOnMetadataChange(one, 'add')).toEqual(['team/gpt']);
    expect(modelKeyOnMetadataChange(one, 'update', empty)).toEqual(['team/gpt']);
    expect(modelKeyOnMetadataChange({ ...one, metadata: { ...one.metadata, resourceVersion: '7' } }, 'update', one)).toEqual([]);
    expect(modelKeyOnMetadataChange(empty, 'delete')).toEqual(['team/gpt']);
    // The Secret's watch keeps no data: only the client IDs (withoutData).
    expect(withoutData(storedSecret({ 'alice-1': 'c2stYWFh' }))).not.toHaveProperty('data');
  });
});
