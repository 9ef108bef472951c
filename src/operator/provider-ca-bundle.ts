// The ConfigMap of provider CAs (chart value platform.providerTLS.caConfigMap), which every
// PassthroughModel's BackendTLSPolicy then names instead of the system CAs. Envoy Gateway refuses
// a policy whose ConfigMap or `ca.crt` is missing, and the model's requests fail, so the model says
// so (BackendConfigured=False, naming the ConfigMap and the fix) and comes back as soon as the
// ConfigMap is fixed. Read from a watch of the namespace's ConfigMaps but the operator's key
// metadata (a label selector, as for credential Secrets); only the number of certificates in
// `ca.crt` is cached, never the bundle.
import { notApiKeyObjectsSelector } from './api-key-objects';
import type { ConditionInput } from './runtime/conditions';
import type { CachedKind } from './runtime/cached-lookups';
import type { SecondaryWatch } from './runtime/controller';
import { type KubeObject, type KubeRest, objectRef } from '../kube/rest';

/** The key of the CA certificates in the ConfigMap (Gateway API's BackendTLSPolicy reads `ca.crt`). */
export const CA_BUNDLE_KEY = 'ca.crt';
const CHART_VALUE = 'platform.providerTLS.caConfigMap';

/** What is cached of a ConfigMap: its identity and how many PEM certificates its `ca.crt` holds. */
interface CaBundleEntry extends KubeObject {
  certificates: number;
}

export function caBundleEntry(obj: KubeObject): CaBundleEntry {
  const bundle = (obj as { data?: Record<string, string> }).data?.[CA_BUNDLE_KEY] ?? '';
  const m = obj.metadata;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion }, certificates: bundle.split('-----BEGIN CERTIFICATE-----').length - 1 };
}

export class ProviderCABundle {
  private cache: CachedKind | undefined;
  /** The models passed since start (their key): all of them name the ConfigMap. */
  private readonly models = new Set<string>();

  constructor(readonly name: string) {}

  watch(namespace: string): SecondaryWatch {
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace,
      labelSelector: notApiKeyObjectsSelector,
      transform: caBundleEntry,
      onCache: (cache) => (this.cache = cache),
      map: (obj, event, old) => {
        if (obj.metadata.name !== this.name || event === 'resync') return [];
        if (event === 'update' && (old as CaBundleEntry | undefined)?.certificates === (obj as CaBundleEntry).certificates) return [];
        return [...this.models];
      },
    };
  }

  /** Record that the model (`namespace/name`) is published with the ConfigMap, or forget it (gone). */
  reference(model: string, present: boolean): void {
    if (present) this.models.add(model);
    else this.models.delete(model);
  }

  /** BackendConfigured=False when the ConfigMap or its certificates are missing; undefined when it is usable. */
  async problem(client: KubeRest, namespace: string): Promise<ConditionInput | undefined> {
    let entry: CaBundleEntry | null | undefined;
    if (this.cache?.hasSynced) entry = (this.cache.get(namespace, this.name) as CaBundleEntry | undefined) ?? null;
    else {
      const configMap = await client.get<KubeObject>(objectRef('v1', 'ConfigMap', this.name, namespace));
      entry = configMap ? caBundleEntry(configMap) : null;
    }
    const fix = `put the CA certificates (PEM) that sign the providers' certificates under key "${CA_BUNDLE_KEY}", or set the chart value ${CHART_VALUE} to "" to verify providers against the system CAs`;
    if (entry === null) {
      return { type: 'BackendConfigured', status: false, reason: 'ProviderCANotFound', message: `ConfigMap ${this.name} (chart value ${CHART_VALUE}) does not exist in namespace ${namespace}, so the gateway cannot verify the provider and refuses its requests; create it and ${fix}` };
    }
    if (entry.certificates === 0) {
      return { type: 'BackendConfigured', status: false, reason: 'ProviderCAEmpty', message: `ConfigMap ${this.name} (chart value ${CHART_VALUE}) has no PEM certificate under "${CA_BUNDLE_KEY}", so the gateway cannot verify the provider and refuses its requests; ${fix}` };
    }
    return undefined;
  }
}
