// A model's key objects as its controller's watches hold them: the key Secret (its client IDs,
// never a key value) and the metadata ConfigMap with its data (who owns each key, its groups,
// expiry and tier: no key material). A pass over a converged model then reads its keys without a
// request, so a resync or a restart sends nothing for them. Both watches bring the model back when
// what a pass reads changes: the Secret's client IDs (a key minted or revoked by the portal,
// `nls keys` or the operator) or the ConfigMap's data (a record written or removed). The informer
// updates its cache before it calls the mapping, so the pass that follows reads the new copy.
import { LABEL_MODEL_KIND, ModelRef, desiredApiKeyMetadataConfigMap, desiredApiKeySecret } from '../translate/keys/api-keys';
import { type KeyObjectsRead, type KeyObjectsSource, apiKeyObjectsSelector, modelKeyOfApiKeyObject, modelKeyOnClientIdChange, withoutData } from './api-key-objects';
import type { CachedKind } from './runtime/cached-lookups';
import type { SecondaryWatch } from './runtime/controller';
import type { KubeObject } from '../kube/rest';
import { isDeepStrictEqual } from 'node:util';

/** What is cached of a metadata ConfigMap: identity, labels, annotations and data (no managedFields). */
function metadataConfigMap(obj: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion, labels, annotations, deletionTimestamp } = obj.metadata;
  const data = (obj as { data?: Record<string, string> }).data;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, uid, resourceVersion, labels, annotations, deletionTimestamp }, ...(data ? { data } : {}) } as KubeObject;
}

/** The model to reconcile when a metadata ConfigMap's data changed (not for the empty one the operator creates). */
export function modelKeyOnMetadataChange(obj: KubeObject, event: string, old?: KubeObject): string[] {
  const data = (o?: KubeObject) => (o as { data?: Record<string, string> } | undefined)?.data ?? {};
  if (event === 'resync') return [];
  if (event === 'add' && Object.keys(data(obj)).length === 0) return [];
  if (event === 'update' && isDeepStrictEqual(data(obj), data(old))) return [];
  return modelKeyOfApiKeyObject(obj);
}

// The cached object carries every label and annotation the operator applies, with its values
// (then applying it again would change nothing).
function asApplied(cached: KubeObject | undefined, desired: { metadata: { labels: Record<string, string>; annotations: Record<string, string> } }): boolean {
  if (!cached || cached.metadata.deletionTimestamp) return false;
  const has = (have: Record<string, string> | undefined, want: Record<string, string>) => Object.entries(want).every(([k, v]) => have?.[k] === v);
  return has(cached.metadata.labels, desired.metadata.labels) && has(cached.metadata.annotations, desired.metadata.annotations);
}

export class KeyObjectCache implements KeyObjectsSource {
  private secrets: CachedKind | undefined;
  private metadata: CachedKind | undefined;

  constructor(private readonly modelKind: 'LLMModel' | 'PassthroughModel') {}

  private selector(): string {
    return `${apiKeyObjectsSelector},${LABEL_MODEL_KIND}=${this.modelKind}`;
  }

  /**
   * The watch on the kind's key Secrets, in the operator namespace only (models live there, and
   * RBAC grants Secrets nowhere wider), without their data.
   */
  secretWatch(namespace: string): SecondaryWatch {
    return { apiVersion: 'v1', kind: 'Secret', namespace, labelSelector: this.selector(), map: modelKeyOnClientIdChange, transform: withoutData, onCache: (c) => (this.secrets = c) };
  }

  /** The watch on the kind's metadata ConfigMaps, with their data. */
  metadataWatch(namespace: string): SecondaryWatch {
    return { apiVersion: 'v1', kind: 'ConfigMap', namespace, labelSelector: this.selector(), map: modelKeyOnMetadataChange, transform: metadataConfigMap, onCache: (c) => (this.metadata = c) };
  }

  /**
   * The model's key objects from the watches, when both have listed and both objects stand as the
   * operator applies them; undefined otherwise (the caller creates or refreshes them on the server).
   */
  current(model: ModelRef): KeyObjectsRead | undefined {
    if (!this.secrets?.hasSynced || !this.metadata?.hasSynced) return undefined;
    const desiredSecret = desiredApiKeySecret(model);
    const desiredMetadata = desiredApiKeyMetadataConfigMap(model);
    const secret = this.secrets.get(model.namespace, desiredSecret.metadata.name) as (KubeObject & { clientIds?: string[]; type?: string }) | undefined;
    const metadata = this.metadata.get(model.namespace, desiredMetadata.metadata.name) as (KubeObject & { data?: Record<string, string> }) | undefined;
    // Labelled as the model's key objects and annotated with its name: what the ownership check
    // (api-key-objects.ts) asks of objects it reads from the server, so none is needed here.
    if (!asApplied(secret, desiredSecret) || secret!.type !== desiredSecret.type || !asApplied(metadata, desiredMetadata)) return undefined;
    return { secretName: desiredSecret.metadata.name, clientIds: [...(secret!.clientIds ?? [])], metadataData: metadata!.data };
  }
}
