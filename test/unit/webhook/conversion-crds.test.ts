import { conversionSpec } from '../../../src/api/crd';
import { convertsThrough } from '../../../src/webhook/conversion-crds';

const service = { name: 'r1-webhook', namespace: 'team-a' };
const crdWith = (conversion: unknown) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'x' }, spec: { conversion } }) as never;

describe('convertsThrough', () => {
  it('accepts exactly the block the operator writes, with or without its CA', () => {
    expect(convertsThrough(crdWith(conversionSpec(service, 'Q0E=')), service)).toBe(true);
    expect(convertsThrough(crdWith(conversionSpec(service)), service)).toBe(true);
    expect(convertsThrough(crdWith(conversionSpec({ url: 'https://127.0.0.1:1/convert' })), { url: 'https://127.0.0.1:1/convert' })).toBe(true);
  });

  it('refuses another strategy, another Service, path, port or review version, and a URL in place of the Service', () => {
    const spec = conversionSpec(service);
    expect(convertsThrough(crdWith(undefined), service)).toBe(false);
    expect(convertsThrough(crdWith({ strategy: 'None' }), service)).toBe(false);
    expect(convertsThrough(crdWith(conversionSpec({ ...service, namespace: 'team-b' })), service)).toBe(false);
    expect(convertsThrough(crdWith(conversionSpec({ ...service, name: 'r2-webhook' })), service)).toBe(false);
    expect(convertsThrough(crdWith({ ...spec, webhook: { ...spec.webhook, clientConfig: { service: { ...service, path: '/other', port: 443 } } } }), service)).toBe(false);
    expect(convertsThrough(crdWith({ ...spec, webhook: { ...spec.webhook, clientConfig: { service: { ...service, path: '/convert', port: 8443 } } } }), service)).toBe(false);
    expect(convertsThrough(crdWith({ ...spec, webhook: { ...spec.webhook, conversionReviewVersions: ['v1beta1'] } }), service)).toBe(false);
    expect(convertsThrough(crdWith(conversionSpec({ url: 'https://127.0.0.1:1/convert' })), service)).toBe(false);
    expect(convertsThrough(crdWith(conversionSpec(service)), { url: 'https://127.0.0.1:1/convert' })).toBe(false);
  });
});
