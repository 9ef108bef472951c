import { InformerCache, cacheable } from '../../../src/kube/informer-cache';
import type { KubeObject } from '../../../src/kube/rest';

const cm = (name: string, resourceVersion: string, namespace = 'ns'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, resourceVersion },
});

const summary = (changes: { event: string; obj: KubeObject; old?: KubeObject }[]) =>
  changes.map((c) => `${c.event} ${c.obj.metadata.name}@${c.obj.metadata.resourceVersion}${c.old ? ` (was ${c.old.metadata.resourceVersion})` : ''}`);

describe('InformerCache', () => {
  it('reports every listed object as added on the first list and resumes from the list version', () => {
    const cache = new InformerCache();
    expect(summary(cache.replace([cm('a', '1'), cm('b', '2')], '10'))).toEqual(['add a@1', 'add b@2']);
    expect(cache.resourceVersion).toBe('10');
    expect(cache.size).toBe(2);
    expect(cache.get('ns', 'a')?.metadata.resourceVersion).toBe('1');
  });

  it('on a relist reports what changed meanwhile: new, modified and vanished objects, nothing for the unchanged', () => {
    const cache = new InformerCache();
    cache.replace([cm('same', '1'), cm('changed', '2'), cm('gone', '3')], '10');
    const changes = cache.replace([cm('same', '1'), cm('changed', '7'), cm('new', '8')], '20');
    expect(summary(changes)).toEqual(['update changed@7 (was 2)', 'add new@8', 'delete gone@3']);
    expect(cache.list().map((o) => o.metadata.name).sort()).toEqual(['changed', 'new', 'same']);
    expect(cache.resourceVersion).toBe('20');
  });

  it('keeps objects of the same name in different namespaces apart', () => {
    const cache = new InformerCache();
    cache.replace([cm('a', '1', 'one'), cm('a', '2', 'two')], '5');
    expect(cache.get('one', 'a')?.metadata.resourceVersion).toBe('1');
    expect(cache.get('two', 'a')?.metadata.resourceVersion).toBe('2');
    expect(summary(cache.replace([cm('a', '2', 'two')], '6'))).toEqual(['delete a@1']);
  });

  it('applies watch events in order and moves the resume version with each', () => {
    const cache = new InformerCache();
    cache.replace([], '1');
    expect(summary([cache.apply('ADDED', cm('a', '2'))!])).toEqual(['add a@2']);
    expect(summary([cache.apply('MODIFIED', cm('a', '3'))!])).toEqual(['update a@3 (was 2)']);
    expect(cache.resourceVersion).toBe('3');
    expect(summary([cache.apply('DELETED', cm('a', '4'))!])).toEqual(['delete a@4']);
    expect(cache.get('ns', 'a')).toBeUndefined();
    expect(cache.resourceVersion).toBe('4');
  });

  it('treats a MODIFIED for an unknown object as an add, and still reports a DELETED it never saw', () => {
    const cache = new InformerCache();
    expect(cache.apply('MODIFIED', cm('late', '5'))?.event).toBe('add');
    expect(cache.apply('DELETED', cm('unseen', '6'))?.event).toBe('delete');
    expect(cache.size).toBe(1);
  });

  it('takes only the resourceVersion from a bookmark', () => {
    const cache = new InformerCache();
    cache.replace([cm('a', '1')], '1');
    const bookmark = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: '', resourceVersion: '99' } } as KubeObject;
    expect(cache.apply('BOOKMARK', bookmark)).toBeUndefined();
    expect(cache.resourceVersion).toBe('99');
    expect(cache.list().map((o) => o.metadata.name)).toEqual(['a']);
  });
});

describe('cacheable', () => {
  const raw = {
    metadata: { name: 'a', namespace: 'ns', resourceVersion: '1', managedFields: [{ manager: 'x' }] },
    data: { secret: 's3cr3t' },
  } as unknown as KubeObject;

  it('drops managedFields and restores apiVersion and kind without touching the input', () => {
    const out = cacheable(raw, { apiVersion: 'v1', kind: 'Secret' });
    expect(out).toEqual({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a', namespace: 'ns', resourceVersion: '1' }, data: { secret: 's3cr3t' } });
    expect(raw.metadata.managedFields).toBeDefined();
  });

  it("drops kubectl's last-applied annotation and keeps the other annotations", () => {
    const applied = {
      metadata: { name: 'a', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"big":"copy"}', team: 'x' } },
    } as unknown as KubeObject;
    const out = cacheable(applied, { apiVersion: 'llm.nebari.dev/v1alpha1', kind: 'PassthroughModel' });
    expect(out.metadata.annotations).toEqual({ team: 'x' });
    expect(applied.metadata.annotations).toHaveProperty(['kubectl.kubernetes.io/last-applied-configuration']);
  });

  it('keeps managedFields on request and applies the transform first', () => {
    const out = cacheable(raw, {
      apiVersion: 'v1',
      kind: 'Secret',
      stripManagedFields: false,
      transform: (o) => ({ ...o, data: undefined }),
    });
    expect(out.metadata.managedFields).toEqual([{ manager: 'x' }]);
    expect(out.data).toBeUndefined();
  });
});
