// The gateway stack check of `nls preflight` on facts (the integration test reads them from a real
// API server): image tags, Gateway API bundle versions, AI Gateway CRD shapes, controller versions;
// and the matrix in code against docs/compatibility.md.
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  AI_GATEWAY_CRDS, BUNDLE_VERSION_ANNOTATION, type CrdFacts, ENVOY_GATEWAY_CRDS, GATEWAY_API_CRDS, GATEWAY_MATRIX, type GatewayStackFacts, gatewayStackFindings, imageTagVersion,
} from '../../../src/cli/gateway/gateway-stack';

const route = (fields: { hostnames: boolean; ruleName: boolean }) => ({
  openAPIV3Schema: {
    properties: {
      spec: {
        properties: {
          ...(fields.hostnames ? { hostnames: {} } : {}),
          rules: { items: { properties: fields.ruleName ? { name: {} } : {} } },
        },
      },
    },
  },
});

function facts(overrides: { bundle?: string; aiVersions?: string[]; routeFields?: { hostnames: boolean; ruleName: boolean }; eg?: string[]; ai?: string[]; drop?: string[] } = {}): GatewayStackFacts {
  const crds = new Map<string, CrdFacts>();
  for (const name of GATEWAY_API_CRDS) crds.set(name, { name, annotations: { [BUNDLE_VERSION_ANNOTATION]: overrides.bundle ?? 'v1.5.1' }, versions: [{ name: 'v1', served: true, storage: true }] });
  for (const name of ENVOY_GATEWAY_CRDS) crds.set(name, { name, annotations: {}, versions: [{ name: 'v1alpha1', served: true, storage: true }] });
  for (const name of AI_GATEWAY_CRDS) {
    const versions = (overrides.aiVersions ?? ['v1alpha1', 'v1beta1']).map((v, i, all) => ({
      name: v,
      served: true,
      storage: i === all.length - 1,
      schema: name.startsWith('aigatewayroutes') ? route(overrides.routeFields ?? { hostnames: true, ruleName: true }) : undefined,
    }));
    crds.set(name, { name, annotations: {}, versions });
  }
  for (const name of overrides.drop ?? []) crds.delete(name);
  return {
    crds,
    envoyGateway: (overrides.eg ?? ['docker.io/envoyproxy/gateway:v1.8.1']).map((image) => ({ deployment: 'envoy-gateway-system/envoy-gateway', images: [image] })),
    aiGateway: (overrides.ai ?? ['docker.io/envoyproxy/ai-gateway-controller:v1.1.0']).map((image) => ({ deployment: 'envoy-ai-gateway-system/ai-gateway-controller', images: [image] })),
  };
}

const summary = (f: GatewayStackFacts) => gatewayStackFindings(f).map((g) => `${g.severity} ${g.component}: ${g.message}`);

test('image tags: release tags with or without v, registry ports and digests; no tag or latest is unknown', () => {
  expect(imageTagVersion('docker.io/envoyproxy/gateway:v1.8.1')).toEqual({ major: 1, minor: 8, patch: 1, rc: undefined });
  expect(imageTagVersion('127.0.0.1:5000/envoyproxy/gateway:1.9.0@sha256:abc')).toMatchObject({ major: 1, minor: 9, patch: 0 });
  expect(imageTagVersion('127.0.0.1:5000/envoyproxy/gateway')).toBeUndefined();
  expect(imageTagVersion('envoyproxy/gateway@sha256:abc')).toBeUndefined();
  expect(imageTagVersion('envoyproxy/gateway:latest')).toBeUndefined();
});

test('the supported stack has no findings', () => {
  expect(summary(facts())).toEqual([]);
});

test('an old Gateway API bundle blocks, a newer one than tested warns, a CRD without the annotation is unknown', () => {
  expect(summary(facts({ bundle: 'v1.4.1' }))).toEqual([`error Gateway API CRDs: too old: ${GATEWAY_API_CRDS.join(', ')} (bundle-version v1.4.1); this release needs 1.5.1`]);
  expect(summary(facts({ bundle: 'v1.7.0' }))[0]).toMatch(/^warning Gateway API CRDs: newer than tested: .*checked up to 1\.6\.1$/);
  expect(summary(facts({ bundle: 'v1.6.1' }))).toEqual([]);
  expect(summary(facts({ bundle: 'main' }))[0]).toMatch(/^warning Gateway API CRDs: version unknown/);
});

test('AI Gateway CRDs: v1alpha1 only (0.5) and no hostnames (0.6) block; no rule names (0.7 to 1.0) warns', () => {
  expect(summary(facts({ aiVersions: ['v1alpha1'] }))).toEqual([`error AI Gateway CRDs: too old: ${AI_GATEWAY_CRDS.join(', ')} do not serve v1beta1 (AI Gateway 0.5 or earlier); this release writes aigateway.envoyproxy.io/v1beta1`]);
  expect(summary(facts({ routeFields: { hostnames: false, ruleName: false } }))[0]).toMatch(/^error AI Gateway CRDs: too old: AIGatewayRoute has no spec\.hostnames/);
  expect(summary(facts({ routeFields: { hostnames: true, ruleName: false } }))[0]).toMatch(/^warning AI Gateway CRDs: older than supported: AIGatewayRoute rules have no name/);
});

test('missing pieces: a whole missing component warns, a partly installed one blocks', () => {
  expect(summary(facts({ drop: AI_GATEWAY_CRDS }))).toEqual(['warning AI Gateway CRDs: not installed: the operator cannot write AIGatewayRoutes']);
  expect(summary(facts({ drop: [ENVOY_GATEWAY_CRDS[1]] }))).toEqual([`error Envoy Gateway CRDs: incomplete: ${ENVOY_GATEWAY_CRDS[1]} missing`]);
  expect(summary(facts({ eg: [], ai: [] }))).toEqual([
    'warning Envoy Gateway controller: not found (looked for a Deployment labelled control-plane=envoy-gateway in every namespace)',
    'warning AI Gateway controller: not found (looked for a Deployment ai-gateway-controller in every namespace)',
  ]);
});

test('controller versions: below the minimum blocks, below supported or above tested warns, no tag is unknown', () => {
  expect(summary(facts({ eg: ['envoyproxy/gateway:v1.7.2'] }))[0]).toMatch(/^error Envoy Gateway controller: too old: .*v1\.7\.2; this release needs 1\.8\.0 or newer \(supported 1\.8\.1\)$/);
  expect(summary(facts({ eg: ['envoyproxy/gateway:v1.8.0'] }))[0]).toMatch(/^warning Envoy Gateway controller: older than supported/);
  expect(summary(facts({ eg: ['envoyproxy/gateway:v1.9.0'] }))).toEqual([]);
  expect(summary(facts({ eg: ['envoyproxy/gateway:v1.10.0'] }))[0]).toMatch(/^warning Envoy Gateway controller: newer than tested/);
  expect(summary(facts({ ai: ['envoyproxy/ai-gateway-controller:v0.6.0'] }))[0]).toMatch(/^error AI Gateway controller: too old/);
  expect(summary(facts({ ai: ['envoyproxy/ai-gateway-controller:v1.0.0'] }))[0]).toMatch(/^warning AI Gateway controller: older than supported/);
  expect(summary(facts({ ai: ['mirror/ai-gateway-controller@sha256:0f'] }))[0]).toMatch(/^warning AI Gateway controller: version unknown/);
});

test('every finding says what to do', () => {
  const all = gatewayStackFindings(facts({ bundle: 'v1.0.0', aiVersions: ['v1alpha1'], eg: ['x:v1.0.0'], ai: ['y'] }));
  expect(all.length).toBeGreaterThan(3);
  for (const f of all) expect(f.fix).toMatch(/upgrade|install|check|read/);
});

test('the matrix in code is the one docs/compatibility.md states', () => {
  const doc = fs.readFileSync(path.resolve(__dirname, '../../../docs/compatibility.md'), 'utf8');
  const row = doc.split('\n').find((l) => l.startsWith('| 0.2.x'))!;
  expect(row).toContain(`| ${GATEWAY_MATRIX.aiGateway.supported} (`);
  expect(row).toContain(`| ${GATEWAY_MATRIX.envoyGateway.supported} (`);
  expect(row).toContain(`${GATEWAY_MATRIX.envoyGateway.checked} CRDs checked`);
  expect(row).toContain(`| ${GATEWAY_MATRIX.gatewayApi.supported} standard or experimental; ${GATEWAY_MATRIX.gatewayApi.checked} CRDs checked`);
});
