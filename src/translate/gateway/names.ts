// Names of every object generated for a model. They are derived only from the model's name, so
// the operator, the chart and the CLI agree on them without looking anything up. Every name is
// at most 63 characters (the shortest limit among the generated kinds and of label values):
// when `<model>-<suffix>` would be longer, the model part is cut and a stable hash of the full
// name keeps distinct models distinct.
import { createHash } from 'node:crypto';

/** The longest name (and label value) this project generates. */
export const MAX_GENERATED_NAME_LENGTH = 63;
const HASH_LENGTH = 8;

/** The first characters of the SHA-256 of `text`, in hex: stable across runs and machines. */
export function stableHash(text: string, length = HASH_LENGTH): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/**
 * `<base>-<suffix>` (or `<base>` without a suffix) when it fits in 63 characters; otherwise the
 * base is cut and `-<hash>` of the full name inserted before the suffix, so the suffix that says
 * what the object is stays readable: `a-very-long-model-name-…-1a2b3c4d-external`.
 */
export function boundedName(base: string, suffix?: string): string {
  const full = suffix ? `${base}-${suffix}` : base;
  if (full.length <= MAX_GENERATED_NAME_LENGTH) return full;
  const tail = `-${stableHash(full)}${suffix ? `-${suffix}` : ''}`;
  // A cut may end on "-" or "."; names must end with a letter or digit.
  const head = base.slice(0, MAX_GENERATED_NAME_LENGTH - tail.length).replace(/[-.]+$/, '');
  return `${head}${tail}`;
}

/** The two shared endpoints a model can be published on. */
export type EndpointName = 'external' | 'internal';
export const ENDPOINT_NAMES: readonly EndpointName[] = ['external', 'internal'];

/** Every generated name for the model called `modelName`. */
export interface GatewayObjectNames {
  /** AIGatewayRoute of an endpoint; the AI Gateway controller gives its HTTPRoute the same name. */
  route(endpoint: EndpointName): string;
  /** Envoy Gateway SecurityPolicy protecting an endpoint's generated HTTPRoute. */
  securityPolicy(endpoint: EndpointName): string;
  /**
   * Envoy Gateway BackendTrafficPolicy of an endpoint's generated HTTPRoute: retries, passive
   * health check and (external) the per-key quotas. The external one keeps the name it had when
   * it held only quotas (`-external-quota`), so an upgrade updates it in place: a new name would
   * briefly leave two policies on the route and restart the quota counters.
   */
  trafficPolicy(endpoint: EndpointName): string;
  /** Envoy Gateway Backend (PassthroughModel): the provider's host and port. */
  readonly backend: string;
  /** BackendTLSPolicy (PassthroughModel): TLS to the provider with the system CAs. */
  readonly backendTLSPolicy: string;
  /** AIServiceBackend (PassthroughModel): the provider's API schema. */
  readonly aiServiceBackend: string;
  /** BackendSecurityPolicy (PassthroughModel): the credential sent upstream. */
  readonly backendSecurityPolicy: string;
  /** InferencePool (LLMModel): the serving pods behind the routes. */
  readonly inferencePool: string;
  /** Service of the endpoint picker (EPP) the InferencePool consults (LLMModel). */
  readonly endpointPicker: string;
  /** Secret holding the model's API keys (data key = client ID, value = key); no owner reference. */
  readonly apiKeysSecret: string;
  /** Label value identifying the model (`llm.nebari.dev/model`). */
  readonly modelLabel: string;
}

// Every builder asks for the names of the model it is translating, so the last answer is kept
// (one entry: pure, bounded, and a hit for all calls of one translation).
let lastNames: { readonly modelName: string; readonly names: GatewayObjectNames } | undefined;

export function gatewayObjectNames(modelName: string): GatewayObjectNames {
  if (lastNames?.modelName !== modelName) lastNames = { modelName, names: Object.freeze(computeNames(modelName)) };
  return lastNames.names;
}

function computeNames(modelName: string): GatewayObjectNames {
  return {
    route: (endpoint) => boundedName(modelName, endpoint),
    securityPolicy: (endpoint) => boundedName(modelName, `${endpoint}-auth`),
    trafficPolicy: (endpoint) => boundedName(modelName, endpoint === 'external' ? 'external-quota' : `${endpoint}-traffic`),
    backend: boundedName(modelName, 'backend'),
    backendTLSPolicy: boundedName(modelName, 'backend-tls'),
    aiServiceBackend: boundedName(modelName),
    backendSecurityPolicy: boundedName(modelName, 'upstream-auth'),
    inferencePool: boundedName(modelName),
    endpointPicker: boundedName(modelName, 'epp'),
    apiKeysSecret: apiKeysSecretName(modelName),
    modelLabel: boundedName(modelName),
  };
}

/**
 * The names of `modelName`'s generated objects, by the kind of object each names (names of
 * different kinds never clash). Two models whose lists share a name of one kind would write the
 * same object: a short name can equal a long name's cut form (`<head>-<hash>-<suffix>`), and the
 * 32-bit hash of two long names can collide.
 */
export function generatedNamesByKind(modelName: string): Record<string, readonly string[]> {
  const n = gatewayObjectNames(modelName);
  return {
    AIGatewayRoute: [n.route('external'), n.route('internal')],
    SecurityPolicy: [n.securityPolicy('external'), n.securityPolicy('internal')],
    BackendTrafficPolicy: [n.trafficPolicy('external'), n.trafficPolicy('internal')],
    Backend: [n.backend],
    BackendTLSPolicy: [n.backendTLSPolicy],
    AIServiceBackend: [n.aiServiceBackend],
    BackendSecurityPolicy: [n.backendSecurityPolicy],
    InferencePool: [n.inferencePool],
    Service: [n.endpointPicker],
    Secret: [n.apiKeysSecret],
    ConfigMap: [boundedName(modelName, 'api-key-metadata')],
    'label llm.nebari.dev/model': [n.modelLabel],
  };
}

/** Every generated name of a model, of any kind, once. */
export function generatedNames(modelName: string): string[] {
  return [...new Set(Object.values(generatedNamesByKind(modelName)).flat())];
}

/** What generated names add to their model's name (`''`, `-external`, …), measured on a one-letter name. */
const SUFFIXES = generatedNames('m').map((name) => name.slice(1));
/** The most characters a generated name adds to its model's name (`-internal-traffic`). */
const LONGEST_SUFFIX = Math.max(...SUFFIXES.map((suffix) => suffix.length));

/** Whether some generated name of `modelName` is cut (then hashed, and it can equal another model's). */
export function namesMayBeCut(modelName: string): boolean {
  return modelName.length + LONGEST_SUFFIX > MAX_GENERATED_NAME_LENGTH;
}

/** The model names that generate `name` without cutting it: `name` less one of the suffixes. */
export function uncutOwners(name: string): string[] {
  return SUFFIXES.filter((suffix) => name.length > suffix.length && name.endsWith(suffix))
    .map((suffix) => name.slice(0, name.length - suffix.length))
    .filter((owner) => generatedNames(owner).includes(name));
}

/** The generated names two different models would share, as `<kind> <name>`; empty when none. */
export function sharedGeneratedNames(a: string, b: string): string[] {
  if (a === b) return [];
  // Two names of one kind that are not cut are equal only for equal model names (the suffixes of
  // one kind end differently), so models whose names are short enough that no name of theirs is
  // cut share none. The webhook asks this for every pair, so most pairs stop here.
  if (!namesMayBeCut(a) && !namesMayBeCut(b)) return [];
  const [na, nb] = [generatedNamesByKind(a), generatedNamesByKind(b)];
  return Object.keys(na).flatMap((kind) => na[kind].filter((name) => nb[kind].includes(name)).map((name) => `${kind} ${name}`));
}

/** `<model>-api-keys`: the per-model key Secret the operator owns (shared by both model kinds). */
export function apiKeysSecretName(modelName: string): string {
  return boundedName(modelName, 'api-keys');
}
