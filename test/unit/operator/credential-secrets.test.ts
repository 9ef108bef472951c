// The credential Secret watch: what it keeps of a Secret, which models a Secret's change brings
// back, and how its answers read before and after the watch has listed.
import { CredentialSecrets, secretEntries, type SecretEntries } from '../../../src/operator/credential-secrets';
import type { CachedKind } from '../../../src/operator/runtime/cached-lookups';
import type { KubeObject } from '../../../src/kube/rest';

const secret = (name: string, data: Record<string, string>, resourceVersion = '1'): KubeObject =>
  secretEntries({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'llm', uid: `u-${name}`, resourceVersion, labels: { team: 'a' }, managedFields: [] }, data, type: 'Opaque' });

/** A cache the test fills by hand, as the informer would. */
function fakeCache(objects: KubeObject[], hasSynced = true): CachedKind & { list(): KubeObject[] } {
  return { hasSynced, get: (namespace, name) => objects.find((o) => o.metadata.namespace === namespace && o.metadata.name === name), list: () => objects };
}

describe('secretEntries', () => {
  it('keeps the identity and the names of non-empty entries, never a value', () => {
    const kept = secretEntries({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'openai', namespace: 'llm', uid: 'u', resourceVersion: '7', annotations: { a: 'b' } }, data: { apiKey: 'c2stc2VjcmV0', empty: '', other: 'eA==' } });
    expect(kept).toEqual({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'openai', namespace: 'llm', uid: 'u', resourceVersion: '7' }, entries: ['apiKey', 'other'] });
    expect(JSON.stringify(kept)).not.toContain('c2stc2VjcmV0');
  });

  it('reads a Secret without data as one with no entries', () => {
    expect((secretEntries({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }) as SecretEntries).entries).toEqual([]);
  });
});

describe('CredentialSecrets', () => {
  it('watches every Secret but the operator key Secrets, in the given namespace', () => {
    const watch = new CredentialSecrets().watch('llm');
    expect(watch).toMatchObject({ apiVersion: 'v1', kind: 'Secret', namespace: 'llm', labelSelector: '!llm.nebari.dev/api-keys' });
  });

  it('brings back the models that named a Secret when it appears, goes or its entries change', () => {
    const c = new CredentialSecrets();
    c.reference('llm/gpt', 'llm', 'openai');
    c.reference('llm/gpt-mini', 'llm', 'openai');
    c.reference('llm/claude', 'llm', 'anthropic');
    const openai = secret('openai', { apiKey: 'eA==' });
    expect(c.modelsToRequeue(openai, 'add').sort()).toEqual(['llm/gpt', 'llm/gpt-mini']);
    expect(c.modelsToRequeue(openai, 'delete').sort()).toEqual(['llm/gpt', 'llm/gpt-mini']);
    expect(c.modelsToRequeue(secret('anthropic', {}), 'add')).toEqual(['llm/claude']);
    expect(c.modelsToRequeue(secret('unrelated', { apiKey: 'eA==' }), 'add')).toEqual([]);
    // The entry added to an existing Secret: back; a rotated value (same entries): nothing to do.
    expect(c.modelsToRequeue(secret('anthropic', { apiKey: 'eA==' }, '2'), 'update', secret('anthropic', {}))).toEqual(['llm/claude']);
    expect(c.modelsToRequeue(secret('openai', { apiKey: 'eQ==' }, '2'), 'update', openai)).toEqual([]);
    expect(c.modelsToRequeue(openai, 'resync')).toEqual([]);
  });

  it('forgets a model that names another Secret, none, or is gone', () => {
    const c = new CredentialSecrets();
    c.reference('llm/gpt', 'llm', 'openai');
    c.reference('llm/gpt', 'llm', 'openai-2');
    expect(c.modelsToRequeue(secret('openai', {}), 'add')).toEqual([]);
    expect(c.modelsToRequeue(secret('openai-2', {}), 'add')).toEqual(['llm/gpt']);
    c.reference('llm/gpt', 'llm', undefined);
    expect(c.modelsToRequeue(secret('openai-2', {}), 'add')).toEqual([]);
  });

  it('answers from the cache once listed: the entries, or null for a Secret that does not exist', () => {
    const c = new CredentialSecrets();
    expect(c.entries('llm', 'openai')).toBeUndefined(); // no cache yet: ask the server
    c.watch('llm').onCache!(fakeCache([secret('openai', { apiKey: 'eA==' })], false));
    expect(c.entries('llm', 'openai')).toBeUndefined(); // not listed yet
    c.watch('llm').onCache!(fakeCache([secret('openai', { apiKey: 'eA==' })]));
    expect(c.entries('llm', 'openai')).toEqual(['apiKey']);
    expect(c.entries('llm', 'missing')).toBeNull();
  });
});
