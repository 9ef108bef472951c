// Our own Mutating/ValidatingWebhookConfigurations, found by name: reading which CA each webhook
// trusts (readiness, rotation) and writing our CA into their caBundle (self-managed mode).
// Each name is read only as the kind it is named with: the chart's ClusterRole grants `get` per
// kind by resourceNames, so a cross-kind read would be denied (403). Names that do not exist yet
// are skipped and picked up on a later round, so the chart may create them after the operator starts.
import { KubeApiError, type KubeObject, type KubeRest, objectRef } from '../kube/rest';
import { describeApiError } from './lookups';
import type { WebhookConfigurationNames } from './settings';

export type WebhookConfigurationKind = 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';

/** One webhook configuration (or a CRD's conversion webhook, src/webhook/conversion-crds.ts) as far as trust is concerned. */
export interface WebhookConfigurationTrust {
  readonly kind: WebhookConfigurationKind | 'CustomResourceDefinition';
  readonly name: string;
  readonly resourceVersion: string;
  /** Each webhook's name and its caBundle decoded to PEM ('' when empty). */
  readonly webhooks: readonly { readonly name: string; readonly caBundle: string }[];
}

export interface WebhookConfigurations {
  /** Every existing configuration among `names`, each read as its own kind. */
  read(): Promise<WebhookConfigurationTrust[]>;
  /**
   * Sets caBundle of every webhook in every existing configuration to `bundlePem`. Returns the
   * configurations it changed. Conflicts (someone else wrote first) are left for the next round.
   */
  inject(bundlePem: string): Promise<string[]>;
}

function decode(caBundle: string | undefined): string {
  return caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : '';
}

type Configuration = KubeObject & { webhooks?: { name: string; clientConfig: { caBundle?: string } }[] };

export function kubernetesWebhookConfigurations(rest: KubeRest, names: WebhookConfigurationNames): WebhookConfigurations {
  const refOf = (kind: WebhookConfigurationKind, name: string) => objectRef('admissionregistration.k8s.io/v1', kind, name);

  async function readOne(kind: WebhookConfigurationKind, name: string): Promise<WebhookConfigurationTrust | undefined> {
    try {
      const found = await rest.get<Configuration>(refOf(kind, name));
      if (!found) return undefined;
      return {
        kind,
        name,
        resourceVersion: found.metadata?.resourceVersion ?? '',
        webhooks: (found.webhooks ?? []).map((w) => ({ name: w.name, caBundle: decode(w.clientConfig.caBundle) })),
      };
    } catch (error) {
      throw new Error(`reading ${kind} ${name}: ${describeApiError(error)}`);
    }
  }

  async function read(): Promise<WebhookConfigurationTrust[]> {
    const found = await Promise.all([
      ...names.mutating.map((name) => readOne('MutatingWebhookConfiguration', name)),
      ...names.validating.map((name) => readOne('ValidatingWebhookConfiguration', name)),
    ]);
    return found.filter((c): c is WebhookConfigurationTrust => c !== undefined);
  }

  return {
    read,
    async inject(bundlePem) {
      const changed: string[] = [];
      const encoded = Buffer.from(bundlePem).toString('base64');
      for (const configuration of await read()) {
        const stale = configuration.webhooks.map((w, index) => ({ ...w, index })).filter((w) => w.caBundle !== bundlePem);
        if (stale.length === 0) continue;
        // resourceVersion in the patch makes it conditional: a concurrent writer yields 409.
        const body = [
          { op: 'replace', path: '/metadata/resourceVersion', value: configuration.resourceVersion },
          ...stale.map((w) => ({ op: 'add', path: `/webhooks/${w.index}/clientConfig/caBundle`, value: encoded })),
        ];
        try {
          await rest.jsonPatch(refOf(configuration.kind as WebhookConfigurationKind, configuration.name), body);
          changed.push(`${configuration.kind}/${configuration.name}`);
        } catch (error) {
          if (error instanceof KubeApiError && (error.code === 409 || error.code === 404)) continue;
          throw new Error(`injecting the CA into ${configuration.kind} ${configuration.name}: ${describeApiError(error)}`);
        }
      }
      return changed;
    },
  };
}
