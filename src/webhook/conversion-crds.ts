// Our CustomResourceDefinitions as far as conversion-webhook trust is concerned: which CA each
// CRD's spec.conversion.webhook.clientConfig.caBundle holds (readiness, rotation) and writing our
// CA there (self-managed mode), exactly as for the admission webhook configurations. Only caBundle
// is written, by a JSON patch: the generated CRDs never set it, so re-applying them server-side
// (nls crds apply, a GitOps sync) never owns and never resets it. A CRD that is missing or does
// not convert through a webhook (an older chart's CRD) is skipped and picked up on a later round.
import { KubeApiError, type KubeObject, type KubeRest, objectRef } from '../kube/rest';
import { describeApiError } from './lookups';
import type { WebhookConfigurations, WebhookConfigurationTrust } from './webhook-configurations';

type ConversionCrd = KubeObject & {
  spec?: { conversion?: { strategy?: string; webhook?: { clientConfig?: { caBundle?: string } } } };
};

const decode = (caBundle: string | undefined) => (caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : '');

/** The trust of the conversion webhook of each CRD in `names`. */
export function kubernetesConversionCrds(rest: KubeRest, names: readonly string[]): WebhookConfigurations {
  const refOf = (name: string) => objectRef('apiextensions.k8s.io/v1', 'CustomResourceDefinition', name);

  async function readOne(name: string): Promise<WebhookConfigurationTrust | undefined> {
    try {
      const crd = await rest.get<ConversionCrd>(refOf(name));
      if (!crd || crd.spec?.conversion?.strategy !== 'Webhook') return undefined;
      return {
        kind: 'CustomResourceDefinition',
        name,
        resourceVersion: crd.metadata?.resourceVersion ?? '',
        webhooks: [{ name: 'conversion', caBundle: decode(crd.spec.conversion.webhook?.clientConfig?.caBundle) }],
      };
    } catch (error) {
      throw new Error(`reading CustomResourceDefinition ${name}: ${describeApiError(error)}`);
    }
  }

  async function read(): Promise<WebhookConfigurationTrust[]> {
    const found = await Promise.all(names.map(readOne));
    return found.filter((c): c is WebhookConfigurationTrust => c !== undefined);
  }

  return {
    read,
    async inject(bundlePem) {
      const changed: string[] = [];
      const encoded = Buffer.from(bundlePem).toString('base64');
      for (const crd of await read()) {
        if (crd.webhooks.every((w) => w.caBundle === bundlePem)) continue;
        // resourceVersion makes the patch conditional: a concurrent writer yields 409, retried next round.
        const body = [
          { op: 'replace', path: '/metadata/resourceVersion', value: crd.resourceVersion },
          { op: 'add', path: '/spec/conversion/webhook/clientConfig/caBundle', value: encoded },
        ];
        try {
          await rest.jsonPatch(refOf(crd.name), body);
          changed.push(`CustomResourceDefinition/${crd.name}`);
        } catch (error) {
          if (error instanceof KubeApiError && (error.code === 409 || error.code === 404)) continue;
          throw new Error(`injecting the CA into the conversion webhook of CustomResourceDefinition ${crd.name}: ${describeApiError(error)}`);
        }
      }
      return changed;
    },
  };
}

/** Several sets of configurations read and injected as one (admission configurations and CRDs). */
export function combinedConfigurations(...parts: readonly WebhookConfigurations[]): WebhookConfigurations {
  return {
    read: async () => (await Promise.all(parts.map((p) => p.read()))).flat(),
    inject: async (bundlePem) => {
      const changed: string[] = [];
      for (const part of parts) changed.push(...(await part.inject(bundlePem)));
      return changed;
    },
  };
}
