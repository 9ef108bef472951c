// The gateway stack an upgrade needs (docs/compatibility.md): Gateway API, Envoy Gateway and Envoy
// AI Gateway. `nls preflight` reads what is installed — the CRDs (Gateway API's bundle-version
// annotation; the AI Gateway CRDs' served versions and the fields each release added, since they
// carry no version annotation) and the controllers' images — and compares it with the matrix.
// Only what breaks the new operator is an error (it blocks the upgrade); a stack below the
// supported versions but inside the seed's staged upgrade path, newer than tested, missing or
// unreadable is a warning, because upgrading the pack does not make it worse.
import { compareVersions, formatVersion, tryParseVersion, type Version } from '../../semver';
import type { KubeObject, KubeRest } from '../../kube/rest';

/** The versions this release is written for and the newest its tests load (docs/compatibility.md). */
export const GATEWAY_MATRIX = {
  gatewayApi: { supported: '1.5.1', checked: '1.6.1' },
  envoyGateway: { supported: '1.8.1', checked: '1.9.0', minimum: '1.8.0' },
  aiGateway: { supported: '1.1.0', checked: '1.1.0', minimum: '0.7.0' },
} as const;

export type Severity = 'error' | 'warning';

export interface GatewayFinding {
  readonly component: string;
  readonly severity: Severity;
  readonly message: string;
  readonly fix: string;
}

/** A CRD as far as the check needs it. */
export interface CrdFacts {
  readonly name: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly versions: readonly { name: string; served: boolean; storage: boolean; schema?: unknown }[];
}

/** A controller Deployment's image per container. */
export interface ControllerFacts {
  readonly deployment: string;
  readonly images: readonly string[];
}

export interface GatewayStackFacts {
  /** Installed CRDs by name; absent names are missing. */
  readonly crds: ReadonlyMap<string, CrdFacts>;
  readonly envoyGateway: readonly ControllerFacts[];
  readonly aiGateway: readonly ControllerFacts[];
}

export const GATEWAY_API_CRDS = ['gatewayclasses', 'gateways', 'httproutes'].map((p) => `${p}.gateway.networking.k8s.io`);
export const ENVOY_GATEWAY_CRDS = ['envoyproxies', 'backends', 'securitypolicies', 'clienttrafficpolicies', 'backendtrafficpolicies'].map((p) => `${p}.gateway.envoyproxy.io`);
export const AI_GATEWAY_CRDS = ['aigatewayroutes', 'aiservicebackends', 'backendsecuritypolicies', 'gatewayconfigs'].map((p) => `${p}.aigateway.envoyproxy.io`);
export const BUNDLE_VERSION_ANNOTATION = 'gateway.networking.k8s.io/bundle-version';

/** Where the upstream Helm charts put the controllers (well-known names and labels). */
export const ENVOY_GATEWAY_SELECTOR = 'control-plane=envoy-gateway';
export const AI_GATEWAY_DEPLOYMENT = 'ai-gateway-controller';

const MATRIX_DOC = 'docs/compatibility.md';
const v = (text: string) => tryParseVersion(text) as Version;

/** `v1.8.1` from `docker.io/envoyproxy/gateway:v1.8.1` (a digest after the tag is ignored); undefined without a release tag. */
export function imageTagVersion(image: string): Version | undefined {
  const withoutDigest = image.split('@')[0];
  const slash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  if (colon <= slash) return undefined;
  return tryParseVersion(withoutDigest.slice(colon + 1));
}

function missingCrds(crds: GatewayStackFacts['crds'], names: readonly string[]): string[] {
  return names.filter((n) => !crds.has(n));
}

type Schema = { properties?: Record<string, Schema>; items?: Schema };

/** The schema node at `path` (property names; `[]` steps into array items). */
function schemaAt(schema: unknown, path: readonly string[]): Schema | undefined {
  let node = (schema as { openAPIV3Schema?: Schema } | undefined)?.openAPIV3Schema;
  for (const step of path) {
    if (!node) return undefined;
    node = step === '[]' ? node.items : node.properties?.[step];
  }
  return node;
}

function gatewayApiFindings(crds: GatewayStackFacts['crds']): GatewayFinding[] {
  const component = 'Gateway API CRDs';
  const missing = missingCrds(crds, GATEWAY_API_CRDS);
  const { supported, checked } = GATEWAY_MATRIX.gatewayApi;
  const install = `install the Gateway API ${supported} CRDs (standard or experimental channel) before the upgrade`;
  if (missing.length === GATEWAY_API_CRDS.length) return [{ component, severity: 'warning', message: 'not installed: the operator cannot attach model routes', fix: install }];
  const out: GatewayFinding[] = [];
  if (missing.length > 0) out.push({ component, severity: 'error', message: `incomplete: ${missing.join(', ')} missing`, fix: install });
  const bundles = new Map<string, string[]>();
  for (const name of GATEWAY_API_CRDS.filter((n) => crds.has(n))) {
    const bundle = crds.get(name)!.annotations[BUNDLE_VERSION_ANNOTATION] ?? '(none)';
    bundles.set(bundle, [...(bundles.get(bundle) ?? []), name]);
  }
  for (const [bundle, names] of bundles) {
    const version = tryParseVersion(bundle);
    const which = `${names.join(', ')} (bundle-version ${bundle})`;
    if (!version) out.push({ component, severity: 'warning', message: `version unknown: ${which}`, fix: `check that the Gateway API CRDs are ${supported} or newer (${MATRIX_DOC})` });
    else if (compareVersions(version, v(supported)) < 0) out.push({ component, severity: 'error', message: `too old: ${which}; this release needs ${supported}`, fix: install });
    else if (compareVersions(version, v(checked)) > 0) out.push({ component, severity: 'warning', message: `newer than tested: ${which}; checked up to ${checked}`, fix: `read ${MATRIX_DOC} and the Gateway API release notes` });
  }
  return out;
}

function envoyGatewayFindings(facts: GatewayStackFacts): GatewayFinding[] {
  const out: GatewayFinding[] = [];
  const { supported, checked, minimum } = GATEWAY_MATRIX.envoyGateway;
  const missing = missingCrds(facts.crds, ENVOY_GATEWAY_CRDS);
  const upgrade = `upgrade Envoy Gateway and its CRDs to ${supported} with the official chart (docs/upgrading.md, step 2 of the AI Gateway 0.5 path)`;
  if (missing.length > 0) {
    out.push({
      component: 'Envoy Gateway CRDs',
      severity: missing.length === ENVOY_GATEWAY_CRDS.length ? 'warning' : 'error',
      message: missing.length === ENVOY_GATEWAY_CRDS.length ? 'not installed: the operator cannot write Backends and SecurityPolicies' : `incomplete: ${missing.join(', ')} missing`,
      fix: upgrade,
    });
  }
  out.push(...controllerFindings('Envoy Gateway controller', facts.envoyGateway, `Deployment labelled ${ENVOY_GATEWAY_SELECTOR}`, { supported, checked, minimum }, upgrade));
  return out;
}

function aiGatewayFindings(facts: GatewayStackFacts): GatewayFinding[] {
  const out: GatewayFinding[] = [];
  const { supported, checked, minimum } = GATEWAY_MATRIX.aiGateway;
  const component = 'AI Gateway CRDs';
  const upgrade = `upgrade the AI Gateway CRD chart and controller to ${supported} (docs/upgrading.md, the staged path from AI Gateway 0.5)`;
  const missing = missingCrds(facts.crds, AI_GATEWAY_CRDS);
  if (missing.length === AI_GATEWAY_CRDS.length) out.push({ component, severity: 'warning', message: 'not installed: the operator cannot write AIGatewayRoutes', fix: upgrade });
  else if (missing.length > 0) out.push({ component, severity: 'error', message: `incomplete: ${missing.join(', ')} missing`, fix: upgrade });
  const withoutBeta = AI_GATEWAY_CRDS.filter((n) => facts.crds.has(n) && !facts.crds.get(n)!.versions.some((x) => x.name === 'v1beta1' && x.served));
  if (withoutBeta.length > 0) {
    out.push({
      component,
      severity: 'error',
      message: `too old: ${withoutBeta.join(', ')} do not serve v1beta1 (AI Gateway 0.5 or earlier); this release writes aigateway.envoyproxy.io/v1beta1`,
      fix: upgrade,
    });
  }
  // No version annotation upstream: the fields each release added tell them apart (reference notes §1.3).
  const route = facts.crds.get('aigatewayroutes.aigateway.envoyproxy.io');
  const beta = route?.versions.find((x) => x.name === 'v1beta1');
  if (beta?.schema && withoutBeta.length === 0) {
    if (!schemaAt(beta.schema, ['spec', 'hostnames'])) {
      out.push({ component, severity: 'error', message: 'too old: AIGatewayRoute has no spec.hostnames (AI Gateway 0.6); this release writes hostname-scoped routes (0.7 or newer)', fix: upgrade });
    } else if (!schemaAt(beta.schema, ['spec', 'rules', '[]', 'name'])) {
      out.push({ component, severity: 'warning', message: `older than supported: AIGatewayRoute rules have no name (AI Gateway 0.7 to 1.0); supported is ${supported}`, fix: upgrade });
    }
  }
  out.push(...controllerFindings('AI Gateway controller', facts.aiGateway, `Deployment ${AI_GATEWAY_DEPLOYMENT}`, { supported, checked, minimum }, upgrade));
  return out;
}

function controllerFindings(
  component: string,
  controllers: readonly ControllerFacts[],
  lookedFor: string,
  range: { supported: string; checked: string; minimum: string },
  upgrade: string,
): GatewayFinding[] {
  if (controllers.length === 0) {
    return [{ component, severity: 'warning', message: `not found (looked for a ${lookedFor} in every namespace)`, fix: `if it runs under another name, check by hand that it is ${range.supported} (${MATRIX_DOC})` }];
  }
  const out: GatewayFinding[] = [];
  for (const c of controllers) {
    for (const image of c.images) {
      const version = imageTagVersion(image);
      const where = `${c.deployment} runs ${image}`;
      if (!version) out.push({ component, severity: 'warning', message: `version unknown: ${where} (no release tag)`, fix: `check by hand that the image is ${range.supported}` });
      else if (compareVersions(version, v(range.minimum)) < 0) out.push({ component, severity: 'error', message: `too old: ${where}; this release needs ${range.minimum} or newer (supported ${range.supported})`, fix: upgrade });
      else if (compareVersions(version, v(range.supported)) < 0) out.push({ component, severity: 'warning', message: `older than supported: ${where} (${formatVersion(version)} < ${range.supported})`, fix: upgrade });
      else if (compareVersions(version, v(range.checked)) > 0) out.push({ component, severity: 'warning', message: `newer than tested: ${where}; checked up to ${range.checked}`, fix: `read ${MATRIX_DOC} and the upstream release notes` });
    }
  }
  return out;
}

/** Every finding about the installed gateway stack; empty when it matches the matrix. */
export function gatewayStackFindings(facts: GatewayStackFacts): GatewayFinding[] {
  return [...gatewayApiFindings(facts.crds), ...envoyGatewayFindings(facts), ...aiGatewayFindings(facts)];
}

type CrdObject = KubeObject & {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: { versions: { name: string; served: boolean; storage: boolean; schema?: unknown }[] };
};
type DeploymentObject = KubeObject & {
  metadata: { name: string; namespace?: string };
  spec?: { template?: { spec?: { containers?: { name: string; image?: string }[] } } };
};

const controllerFacts = (d: DeploymentObject): ControllerFacts => ({
  deployment: `${d.metadata.namespace}/${d.metadata.name}`,
  // The controller's own container: upstream names it after the Deployment; else every container.
  images: (() => {
    const containers = d.spec?.template?.spec?.containers ?? [];
    const own = containers.filter((c) => c.name === d.metadata.name);
    return (own.length > 0 ? own : containers).map((c) => c.image ?? '');
  })(),
});

/** Reads the installed gateway CRDs and controller Deployments. */
export async function readGatewayStack(rest: KubeRest): Promise<GatewayStackFacts> {
  const crds = new Map<string, CrdFacts>();
  for (const name of [...GATEWAY_API_CRDS, ...ENVOY_GATEWAY_CRDS, ...AI_GATEWAY_CRDS]) {
    const crd = (await rest.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name } })) as CrdObject | undefined;
    if (crd) crds.set(name, { name, annotations: crd.metadata.annotations ?? {}, versions: crd.spec.versions });
  }
  const envoyGateway = (await rest.list<DeploymentObject>('apps/v1', 'Deployment', { labelSelector: ENVOY_GATEWAY_SELECTOR })).items.map(controllerFacts);
  const aiGateway = (await rest.list<DeploymentObject>('apps/v1', 'Deployment', { fieldSelector: `metadata.name=${AI_GATEWAY_DEPLOYMENT}` })).items.map(controllerFacts);
  return { crds, envoyGateway, aiGateway };
}
