// Our CustomResourceDefinitions as far as the conversion webhook is concerned. The generated CRDs
// carry no spec.conversion (Helm cannot template crds/, so the files cannot name this release's
// Service); the operator writes the whole block — strategy Webhook, its own Service on /convert,
// its CA — and rewrites it whenever it differs (another strategy, another Service, an old CA), so
// readiness means "every listed CRD converts through this server and trusts its certificate". A
// JSON patch writes it: no apply of the files (nls crds apply, a GitOps sync) owns or resets a
// field the files never set. A CRD that does not exist yet is skipped and picked up later.
import { type ConversionTarget, CONVERSION_WEBHOOK_PATH, conversionSpec } from '../api/crd';
import { KubeApiError, type KubeObject, type KubeRest, objectRef } from '../kube/rest';
import { describeApiError } from './lookups';
import type { WebhookConfigurations, WebhookConfigurationTrust } from './webhook-configurations';

type ConversionCrd = KubeObject & {
  spec?: {
    conversion?: {
      strategy?: string;
      webhook?: { conversionReviewVersions?: string[]; clientConfig?: { caBundle?: string; url?: string; service?: { name?: string; namespace?: string; path?: string; port?: number } } };
    };
  };
};

const decode = (caBundle: string | undefined) => (caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : '');

/** True when `crd` converts through `target` (at /convert) with ConversionReview v1. */
export function convertsThrough(crd: ConversionCrd, target: ConversionTarget): boolean {
  const conversion = crd.spec?.conversion;
  const config = conversion?.webhook?.clientConfig;
  if (conversion?.strategy !== 'Webhook' || !conversion.webhook?.conversionReviewVersions?.includes('v1')) return false;
  if ('url' in target) return config?.url === target.url && config.service === undefined;
  const service = config?.service;
  return (
    config?.url === undefined &&
    service?.name === target.name &&
    service.namespace === target.namespace &&
    (service.path ?? '') === CONVERSION_WEBHOOK_PATH &&
    (service.port ?? 443) === 443
  );
}

/**
 * The conversion webhook of each CRD in `names`, as `target` serves it. A CRD that converts some
 * other way reads as trusting no CA, so readiness waits and `inject` rewrites its whole block —
 * except when it points at another release's Service that exists: CRDs are cluster-wide, every
 * release of this version converts the same way, and two operators must not take turns.
 */
export function kubernetesConversionCrds(rest: KubeRest, names: readonly string[], target: ConversionTarget): WebhookConfigurations {
  const serviceExists = async (namespace: string, name: string) => (await rest.get(objectRef('v1', 'Service', name, namespace))) !== undefined;

  const refOf = (name: string) => objectRef('apiextensions.k8s.io/v1', 'CustomResourceDefinition', name);

  async function readOne(name: string): Promise<WebhookConfigurationTrust | undefined> {
    try {
      const crd = await rest.get<ConversionCrd>(refOf(name));
      if (!crd) return undefined;
      const other = crd.spec?.conversion?.webhook?.clientConfig?.service;
      const ours = 'url' in target ? undefined : target;
      const servedElsewhere = crd.spec?.conversion?.strategy === 'Webhook' && other?.name && other.namespace && !(other.name === ours?.name && other.namespace === ours?.namespace);
      if (servedElsewhere && (await serviceExists(other.namespace!, other.name!))) return undefined;
      const caBundle = convertsThrough(crd, target) ? decode(crd.spec?.conversion?.webhook?.clientConfig?.caBundle) : '';
      return { kind: 'CustomResourceDefinition', name, resourceVersion: crd.metadata?.resourceVersion ?? '', webhooks: [{ name: 'conversion', caBundle }] };
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
          { op: 'add', path: '/spec/conversion', value: conversionSpec(target, encoded) },
        ];
        try {
          await rest.jsonPatch(refOf(crd.name), body);
          changed.push(`CustomResourceDefinition/${crd.name}`);
        } catch (error) {
          if (error instanceof KubeApiError && (error.code === 409 || error.code === 404)) continue;
          throw new Error(`pointing the conversion webhook of CustomResourceDefinition ${crd.name} at ${'url' in target ? target.url : `${target.namespace}/${target.name}`}: ${describeApiError(error)}`);
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
