// Which models a controller re-renders when a model joins or leaves the external endpoint, from
// the peer watches' caches (fakes here: the real informers run in the integration tests).
import { ExternalEndpointPeers, peerOf } from '../../../src/operator/endpoint-peers';
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

function peersWith(llm: KubeObject[], passthrough: KubeObject[], synced = true): ExternalEndpointPeers {
  const peers = new ExternalEndpointPeers('PassthroughModel');
  const [llmWatch, passthroughWatch] = peers.watches('llm');
  const cache = (objects: KubeObject[]) => ({ hasSynced: synced, list: () => objects, get: (_: string | undefined, name: string) => objects.find((o) => o.metadata.name === name) });
  llmWatch.onCache!(cache(llm));
  passthroughWatch.onCache!(cache(passthrough));
  return peers;
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
    await expect(peers.keySecrets(noServer, 'llm')).resolves.toEqual(['claude-api-keys', 'llama-api-keys', 'openai-api-keys']);
  });
});
