// The apply skip of generated objects (src/operator/runtime/apply.ts) against a watch that lags
// the writes: a pass that runs between our apply and its watch event must not take the cache's
// earlier copy for the stored object.
import { KubeRest, type KubeObject } from '../../../../src/kube/rest';
import { StaticConnection } from '../../../../src/kube/connection';
import { applyObject, lookupMetadata, seenByWatch } from '../../../../src/operator/runtime/apply';
import { registerCachedKind } from '../../../../src/operator/runtime/cached-lookups';
import { ANNOTATION_APPLIED_DIGEST, ANNOTATION_APPLIED_GENERATION } from '../../../../src/translate/applied-digest';

const POLICY = { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'SecurityPolicy' };
const owner = { apiVersion: 'llm.nebari.dev/v1beta1', kind: 'PassthroughModel', name: 'gpt', uid: 'm1', controller: true };

/** The external policy of model gpt accepting these key Secrets, with the digest the translation stamps. */
const policy = (...secrets: string[]): KubeObject => ({
  ...POLICY,
  metadata: { name: 'gpt-external', namespace: 'llm', ownerReferences: [owner], annotations: { [ANNOTATION_APPLIED_DIGEST]: secrets.join(',') } },
  spec: { apiKeyAuth: { credentialRefs: secrets.map((name) => ({ name })) } },
});

/**
 * A server that keeps one object per name (the generation moves with the spec) and a watch that
 * delivers its writes to the cache only when told (`deliver`), as a watch event comes moments later.
 */
function laggingServer() {
  const client = new KubeRest(new StaticConnection({ server: 'https://127.0.0.1:1' }));
  const stored = new Map<string, KubeObject>();
  const cache = new Map<string, KubeObject>();
  const writes: string[] = [];
  let resourceVersion = 1;
  client.apply = (async (body: KubeObject) => {
    const name = body.metadata.name!;
    const before = stored.get(name);
    const specChanged = JSON.stringify(before?.spec) !== JSON.stringify(body.spec);
    const generation = (before?.metadata.generation ?? 0) + (specChanged ? 1 : 0);
    const after = { ...body, metadata: { ...body.metadata, uid: before?.metadata.uid ?? 'p1', generation, resourceVersion: String(++resourceVersion) } };
    stored.set(name, after);
    writes.push(((body.spec as { apiKeyAuth: { credentialRefs: { name: string }[] } }).apiKeyAuth.credentialRefs.map((r) => r.name)).join(','));
    return after;
  }) as KubeRest['apply'];
  registerCachedKind(client, POLICY.apiVersion, POLICY.kind, 'llm', { hasSynced: true, get: (_ns, name) => cache.get(name) });
  const deliver = () => {
    for (const [name, obj] of stored) {
      // Stored as the generated-object watches keep it: metadata only, list items without a kind.
      const { apiVersion: _v, kind: _k, ...item } = lookupMetadata(obj);
      cache.set(name, item as KubeObject);
      seenByWatch(client, POLICY, item as KubeObject);
    }
  };
  const storedSecrets = (name: string) => (stored.get(name)?.spec as { apiKeyAuth: { credentialRefs: { name: string }[] } }).apiKeyAuth.credentialRefs.map((r) => r.name).join(',');
  const storedRecord = (name: string) => (stored.get(name)?.metadata.annotations ?? {}) as Record<string, string>;
  return { client, writes, deliver, storedSecrets, storedRecord, stored };
}

describe('applyObject of a digested object, with a watch that lags our writes', () => {
  it('applies a body that goes back to the cached one while the watch has not reported the write in between', async () => {
    const s = laggingServer();
    await applyObject(s.client, policy('gpt'));
    s.deliver();
    await applyObject(s.client, policy('gpt', 'llama')); // a peer joined; its event not here yet
    await applyObject(s.client, policy('gpt')); // the peer left again: the cache still shows this body
    expect(s.storedSecrets('gpt-external')).toBe('gpt');
    expect(s.writes).toEqual(['gpt', 'gpt,llama', 'gpt']);
    // The record names the generation the server holds, so a restart can skip it.
    expect(s.storedRecord('gpt-external')[ANNOTATION_APPLIED_GENERATION]).toBe(String(s.stored.get('gpt-external')!.metadata.generation));
  });

  it('skips a body it applied itself before the watch reported it, and once the watch caught up', async () => {
    const s = laggingServer();
    await applyObject(s.client, policy('gpt'));
    await applyObject(s.client, policy('gpt')); // not reported yet: our own apply says it is stored
    s.deliver();
    await applyObject(s.client, policy('gpt'));
    expect(s.writes).toEqual(['gpt']);
  });
});
