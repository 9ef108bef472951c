// Which models a controller re-renders when a model joins or leaves the external endpoint, from
// the peer watches' caches (fakes here: the real informers run in the integration tests).
import { ExternalEndpointPeers, peerOf } from '../../../src/operator/endpoint-peers';
import { routeViewOf } from '../../../src/operator/proxy-status';
import type { SecondaryWatch } from '../../../src/operator/runtime/controller';
import type { KubeObject } from '../../../src/kube/rest';

type Over = { external?: boolean; deleting?: boolean; published?: boolean; namespace?: string };
function model(kind: string, name: string, over: Over = {}): KubeObject {
  return peerOf({
    apiVersion: 'llm.nebari.dev/v1beta1',
    kind,
    metadata: { name, namespace: over.namespace ?? 'llm', uid: `uid-${name}`, resourceVersion: '1', ...(over.deleting ? { deletionTimestamp: '2026-12-03T00:00:00Z' } : {}) },
    spec: { endpoints: over.external === undefined ? {} : { external: { enabled: over.external } } },
    status: over.published === false ? {} : { conditions: [{ type: 'ExternalEndpointReady', status: 'True' }] },
  } as KubeObject);
}

/** A generated external HTTPRoute of `model`, created at `created` (as the route watch caches it). */
function route(model: string, created: string): KubeObject {
  return routeViewOf({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: `${model}-external`, namespace: 'llm', creationTimestamp: created }, status: {} } as KubeObject);
}

const cache = (objects: KubeObject[], synced: boolean) => ({ hasSynced: synced, list: () => objects, get: (_: string | undefined, name: string) => objects.find((o) => o.metadata.name === name) });

/** `routes`: the route watch's objects; undefined leaves the route watch without a cache (routes not known). */
function peersWith(llm: KubeObject[], passthrough: KubeObject[], synced = true, routes?: KubeObject[]): ExternalEndpointPeers & { routeWatch: SecondaryWatch } {
  const peers = new ExternalEndpointPeers('PassthroughModel');
  const [llmWatch, passthroughWatch, routeWatch] = peers.watches('llm');
  llmWatch.onCache!(cache(llm, synced));
  passthroughWatch.onCache!(cache(passthrough, synced));
  if (routes) routeWatch.onCache!(cache(routes, synced));
  return Object.assign(peers, { routeWatch });
}

describe('ExternalEndpointPeers', () => {
  const openai = model('PassthroughModel', 'openai');
  const claude = model('PassthroughModel', 'claude');
  const internalOnly = model('PassthroughModel', 'internal-only', { external: false });

  it('caches only identity, deletion, the external switch, whether the model was published and the ids it serves', () => {
    expect(model('LLMModel', 'llama', { external: false })).toEqual({
      apiVersion: 'llm.nebari.dev/v1beta1',
      kind: 'LLMModel',
      metadata: { name: 'llama', namespace: 'llm', uid: 'uid-llama', resourceVersion: '1' },
      spec: { endpoints: { external: { enabled: false } } },
      published: true,
      served: [],
    });
  });

  it('re-renders this kind\'s models that share a model id another model takes or gives up (issue 29, Low)', () => {
    const serving = (kind: string, name: string, declared: string[]) =>
      peerOf({ apiVersion: 'llm.nebari.dev/v1beta1', kind, metadata: { name, namespace: 'llm' }, spec: { models: { declared } } } as KubeObject);
    const peers = peersWith([], [serving('PassthroughModel', 'a', ['gpt-4o']), serving('PassthroughModel', 'b', ['other'])]);
    const c = serving('PassthroughModel', 'c', ['gpt-4o']);
    expect(peers.modelsToRequeue('PassthroughModel', c, 'add')).toEqual(['llm/a']);
    expect(peers.modelsToRequeue('PassthroughModel', c, 'delete')).toEqual(['llm/a']);
    expect(peers.modelsToRequeue('PassthroughModel', serving('PassthroughModel', 'c', ['x']), 'update', c)).toEqual(['llm/a']);
    expect(peers.modelsToRequeue('PassthroughModel', c, 'update', c)).toEqual([]);
  });

  it('re-renders this kind\'s other models on the endpoint when a model is first published there (of either kind)', () => {
    const peers = peersWith([], [openai, claude, internalOnly]);
    const llama = model('LLMModel', 'llama');
    expect(peers.modelsToRequeue('LLMModel', llama, 'update', model('LLMModel', 'llama', { published: false }))).toEqual(['llm/openai', 'llm/claude']);
    // A PassthroughModel joining: the others, and itself once more (its pass may have read the
    // endpoint before a model that joined meanwhile; its own status write requeues nothing).
    expect(peers.modelsToRequeue('PassthroughModel', openai, 'update', model('PassthroughModel', 'openai', { published: false }))).toEqual(['llm/claude', 'llm/openai']);
  });

  it('re-renders them when a model leaves: deleted, being deleted, or its external endpoint disabled', () => {
    const peers = peersWith([], [openai, claude]);
    const llama = model('LLMModel', 'llama');
    expect(peers.modelsToRequeue('LLMModel', model('LLMModel', 'llama', { deleting: true }), 'update', llama)).toEqual(['llm/openai', 'llm/claude']);
    expect(peers.modelsToRequeue('LLMModel', model('LLMModel', 'llama', { external: false }), 'update', llama)).toEqual(['llm/openai', 'llm/claude']);
    expect(peers.modelsToRequeue('LLMModel', llama, 'delete')).toEqual(['llm/openai', 'llm/claude']);
  });

  it('leaves them alone when membership did not change, on resync, and during the first list', () => {
    const peers = peersWith([], [openai, claude]);
    const llama = model('LLMModel', 'llama');
    expect(peers.modelsToRequeue('LLMModel', llama, 'update', llama)).toEqual([]);
    expect(peers.modelsToRequeue('LLMModel', llama, 'resync')).toEqual([]);
    // Not published yet (its key Secret may not exist): joining waits for its first status.
    expect(peers.modelsToRequeue('LLMModel', model('LLMModel', 'llama', { published: false }), 'add')).toEqual([]);
    expect(peers.modelsToRequeue('LLMModel', internalOnly, 'delete')).toEqual([]);
    expect(peersWith([], [openai, claude], false).modelsToRequeue('LLMModel', llama, 'add')).toEqual([]);
  });

  it('names the key Secrets of the published models on the endpoint, from the caches once listed', async () => {
    const peers = peersWith([model('LLMModel', 'llama'), model('LLMModel', 'new', { published: false })], [openai, claude, internalOnly, model('PassthroughModel', 'going', { deleting: true })]);
    const noServer = undefined as never;
    await expect(peers.keySecrets(noServer, openai)).resolves.toEqual(['claude-api-keys', 'llama-api-keys', 'openai-api-keys']);
  });

  describe('once the routes are known, only the models of the two oldest routes accept every key', () => {
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => model('PassthroughModel', n));
    // b's route is the oldest, then a's and c's in the same second (by name), d has none yet.
    const routes = [route('c', '2026-12-05T10:00:01Z'), route('a', '2026-12-05T10:00:01Z'), route('b', '2026-12-05T10:00:00Z')];
    const noServer = undefined as never;

    it('lists every model\'s Secret for those two and none for the others', async () => {
      const peers = peersWith([], [a, b, c, d], true, routes);
      const all = ['a-api-keys', 'b-api-keys', 'c-api-keys', 'd-api-keys'];
      await expect(peers.keySecrets(noServer, b)).resolves.toEqual(all);
      await expect(peers.keySecrets(noServer, a)).resolves.toEqual(all);
      await expect(peers.keySecrets(noServer, c)).resolves.toEqual([]);
      await expect(peers.keySecrets(noServer, d)).resolves.toEqual([]);
    });

    it('lets the first models of an endpoint accept every key before their routes exist', async () => {
      const peers = peersWith([], [c, d], true, []);
      await expect(peers.keySecrets(noServer, c)).resolves.toEqual(['c-api-keys', 'd-api-keys']);
      await expect(peers.keySecrets(noServer, d)).resolves.toEqual(['c-api-keys', 'd-api-keys']);
    });

    it('counts a model not yet published by its own route', async () => {
      const peers = peersWith([], [a, c], true, [route('e', '2026-12-05T09:00:00Z'), ...routes]);
      await expect(peers.keySecrets(noServer, model('PassthroughModel', 'e', { published: false }))).resolves.toEqual(['a-api-keys', 'c-api-keys']);
    });

    it('re-renders only those two when a model joins or leaves', () => {
      const peers = peersWith([], [a, b, c, d], true, routes);
      const llama = model('LLMModel', 'llama');
      expect(peers.modelsToRequeue('LLMModel', llama, 'update', model('LLMModel', 'llama', { published: false }))).toEqual(['llm/b', 'llm/a']);
      expect(peers.modelsToRequeue('LLMModel', llama, 'delete')).toEqual(['llm/b', 'llm/a']);
      // The oldest leaving: the next two (it is no member any more).
      const leaving = peersWith([], [a, model('PassthroughModel', 'b', { deleting: true }), c, d], true, routes);
      expect(leaving.modelsToRequeue('PassthroughModel', model('PassthroughModel', 'b', { deleting: true }), 'update', b)).toEqual(['llm/a', 'llm/c']);
    });

    it('re-renders the new two when a route comes or goes and moves the oldest, and nobody otherwise', () => {
      const current = [...routes];
      const peers = peersWith([], [a, b, c, d], true, current);
      expect(peers.routeWatch.map(routes[2], 'add')).toEqual(['llm/b', 'llm/a']);
      // d's route is created: younger than every other, nothing moves.
      current.push(route('d', '2026-12-05T10:00:05Z'));
      expect(peers.routeWatch.map(current[3], 'add')).toEqual([]);
      // b's route goes: c moves up, and b (no route now) drops the others' keys.
      current.splice(2, 1);
      expect(peers.routeWatch.map(routes[2], 'delete')).toEqual(['llm/a', 'llm/c', 'llm/b']);
      expect(peers.routeWatch.map(current[0], 'update', current[0])).toEqual([]);
    });

    it('re-renders a model that stops accepting every key when an earlier one joins', () => {
      const passthrough = [c, d];
      const peers = peersWith([], passthrough, true, []);
      // No routes yet: c and d (by route name) accept every key.
      expect(peers.modelsToRequeue('LLMModel', model('LLMModel', 'llama', { external: false }), 'add')).toEqual([]);
      expect(peers.modelsToRequeue('LLMModel', model('LLMModel', 'zz'), 'update', model('LLMModel', 'zz', { published: false }))).toEqual(['llm/c', 'llm/d']);
      // a joins, before both by name: a and c now, and d must drop the others' keys.
      passthrough.push(a);
      expect(peers.modelsToRequeue('PassthroughModel', a, 'update', model('PassthroughModel', 'a', { published: false }))).toEqual(['llm/c', 'llm/d', 'llm/a']);
      // The next change re-renders only a and c (oldest first).
      expect(peers.modelsToRequeue('LLMModel', model('LLMModel', 'zz'), 'delete')).toEqual(['llm/a', 'llm/c']);
    });

    it('accepts every key everywhere while the routes are not listed', async () => {
      const peers = peersWith([], [a, b, c, d], true, undefined);
      await expect(peers.keySecrets(noServer, c)).resolves.toEqual(['a-api-keys', 'b-api-keys', 'c-api-keys', 'd-api-keys']);
      expect(peers.modelsToRequeue('LLMModel', model('LLMModel', 'llama'), 'delete')).toEqual(['llm/a', 'llm/b', 'llm/c', 'llm/d']);
    });
  });
});
