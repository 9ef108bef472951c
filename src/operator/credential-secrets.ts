// The provider credential Secrets that PassthroughModels name, read from a watch instead of a GET
// on every pass. The watch covers the operator namespace's Secrets except the operator's own key
// Secrets (a label selector, so this cache never answers the apply path's lookups: see
// cached-lookups.ts) and keeps only which entries each Secret has, never a value. It also brings a
// model back as soon as the Secret it waits for is created or gains its entry, instead of at the
// next requeue.
import { notApiKeyObjectsSelector } from './api-key-objects';
import type { CachedKind } from './runtime/cached-lookups';
import type { SecondaryWatch } from './runtime/controller';
import type { KubeObject } from '../kube/rest';
import { objectKey } from './runtime/object-key';

/** What is cached of a Secret: its identity and the names of its non-empty entries. */
export interface SecretEntries extends KubeObject {
  entries: string[];
}

export function secretEntries(obj: KubeObject): SecretEntries {
  const data = (obj as { data?: Record<string, string> }).data ?? {};
  const m = obj.metadata;
  const entries = Object.keys(data).filter((k) => data[k]).sort();
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion }, entries };
}

export class CredentialSecrets {
  private cache: CachedKind | undefined;
  /** Model key → the Secret key it named at its last pass; and the reverse. */
  private readonly secretOfModel = new Map<string, string>();
  private readonly modelsOfSecret = new Map<string, Set<string>>();

  /** The secondary watch that fills this cache, for the controller of the models that name the Secrets. */
  watch(namespace: string): SecondaryWatch {
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      namespace,
      labelSelector: notApiKeyObjectsSelector, // key Secrets are watched, without data, by their own informer
      transform: secretEntries,
      onCache: (cache) => (this.cache = cache),
      map: (obj, event, old) => this.modelsToRequeue(obj, event, old),
    };
  }

  /** Models to reconcile: those that named this Secret, when it appeared, went, or its entries changed. */
  modelsToRequeue(obj: KubeObject, event: string, old?: KubeObject): string[] {
    if (event === 'resync') return [];
    if (event === 'update' && old && (old as SecretEntries).entries.join() === (obj as SecretEntries).entries.join()) return [];
    return [...(this.modelsOfSecret.get(objectKey(obj.metadata.namespace, obj.metadata.name)) ?? [])];
  }

  /**
   * Record that `model` names `secretName` (undefined: names none, or is gone). Call before
   * `entries`: a Secret created between the two then still brings the model back.
   */
  reference(model: string, namespace: string, secretName: string | undefined): void {
    const before = this.secretOfModel.get(model);
    const after = secretName === undefined ? undefined : objectKey(namespace, secretName);
    if (before === after) return;
    if (before !== undefined) {
      const models = this.modelsOfSecret.get(before);
      models?.delete(model);
      if (models?.size === 0) this.modelsOfSecret.delete(before);
    }
    if (after === undefined) {
      this.secretOfModel.delete(model);
      return;
    }
    this.secretOfModel.set(model, after);
    const models = this.modelsOfSecret.get(after) ?? new Set<string>();
    models.add(model);
    this.modelsOfSecret.set(after, models);
  }

  /**
   * The non-empty entries of the Secret (`null`: no such Secret), or undefined while the watch
   * has not listed yet (the caller asks the server).
   */
  entries(namespace: string, name: string): string[] | null | undefined {
    if (!this.cache?.hasSynced) return undefined;
    const secret = this.cache.get(namespace, name) as SecretEntries | undefined;
    return secret ? secret.entries : null;
  }
}
