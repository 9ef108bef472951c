// The term's informers: the same watch with the same cache shape is one informer, whoever asks;
// any difference (namespace, selector, transform function, managedFields) is a watch of its own;
// the last of its users stops it.
import type { InformerLog } from '../../../../src/kube/informer';
import type { KubeObject, KubeRest } from '../../../../src/kube/rest';
import { SharedInformers } from '../../../../src/operator/runtime/shared-informers';

const log: InformerLog = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const client = {} as KubeRest;
const watch = { apiVersion: 'gateway.envoyproxy.io/v1alpha1', kind: 'SecurityPolicy', namespace: 'llm', stripManagedFields: false };
const keepName = (obj: KubeObject) => ({ apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name: obj.metadata.name } }) as KubeObject;

describe('SharedInformers', () => {
  it('hands out one informer per watch and cache shape', () => {
    const informers = new SharedInformers(client, log);
    const first = informers.informer({ ...watch, transform: keepName });
    expect(informers.informer({ ...watch, transform: keepName })).toBe(first);
    // An equal but different function may cache something else: not shared.
    expect(informers.informer({ ...watch, transform: (obj) => keepName(obj) })).not.toBe(first);
    expect(informers.informer({ ...watch, transform: keepName, namespace: 'other' })).not.toBe(first);
    expect(informers.informer({ ...watch, transform: keepName, labelSelector: 'a=b' })).not.toBe(first);
    expect(informers.informer({ ...watch, transform: keepName, stripManagedFields: true })).not.toBe(first);
    expect(informers.informer({ ...watch })).not.toBe(first);
    expect(informers.size).toBe(6);
  });

  it('stops an informer only when its last user stops', async () => {
    const informers = new SharedInformers(client, log);
    const shared = informers.informer(watch);
    const start = jest.spyOn(shared, 'start').mockImplementation(() => undefined);
    const stop = jest.spyOn(shared, 'stop').mockResolvedValue();
    informers.start(shared);
    informers.start(shared);
    expect(start).toHaveBeenCalledTimes(2); // Informer.start is idempotent: one list, one watch
    await informers.stop(shared);
    expect(stop).not.toHaveBeenCalled();
    await informers.stop(shared);
    expect(stop).toHaveBeenCalledTimes(1);
  });
});
