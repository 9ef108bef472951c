// Turns per-kind rules into HTTP handlers for the six webhook paths. Checks every kind shares
// live here once: the request is for the kind and version the path serves, there is an object,
// and objects that are being deleted are never blocked (finalizer removal must always succeed).
// The rules see v1beta1 objects. The webhook configurations ask for v1beta1 with matchPolicy
// Equivalent, so the API server converts a v1alpha1 write before calling us; a v1alpha1 request
// that still arrives as such (a configuration from before the switch) is converted here.
import { API_GROUP, API_VERSION, API_VERSION_V1BETA1, CLEANUP_FINALIZER } from '../api/common';
import { convertTo } from '../api/conversion';
import { jsonPatch } from './json-patch';
import type { ClusterLookups } from './lookups';
import { type AdmissionRequest, type AdmissionReviewResponse, type KubernetesObject, allow, allowWithPatch, deny, isRecord } from './review';
import type { AdmissionHandler } from './server';
import { v1alpha1FieldNames } from './v1alpha1-fields';
import { type Verdict, denialMessage } from './verdict';

/** What rules may consult besides the request. */
export interface AdmissionContext {
  /** The namespace the operator runs in (`POD_NAMESPACE`); models must live there. */
  readonly operatorNamespace: string;
  /** Namespaces whose AgentDeployments this installation reconciles (the operator namespace first). */
  readonly agentNamespaces: readonly string[];
  /** Cluster reads; may come from a cache that lags the API server (model-cache.ts). */
  readonly lookups: ClusterLookups;
  /**
   * The same reads straight from the API server, when `lookups` is a cache: a refusal is confirmed
   * with them before it is given, and defaults (stored for good) read through them.
   * @default `lookups` (already live)
   */
  readonly liveLookups?: ClusterLookups;
  /** Told of every CREATE or UPDATE this server admits (the model cache sees it before its watch event). */
  readonly admitted?: (object: KubernetesObject) => void;
  /** Image prefixes or references tenants may run (`webhook.allowedImages`); empty or absent allows all. */
  readonly allowedImages?: readonly string[];
}

/** The admission rules of one kind. */
export interface KindAdmission<T = KubernetesObject> {
  /** e.g. `LLMModel`. */
  readonly kind: string;
  /** Lower-case kind used in the paths `/validate-<resource>` and `/mutate-<resource>`. */
  readonly resource: string;
  /** Decides CREATE and UPDATE requests. */
  validate(request: AdmissionRequest<T>, context: AdmissionContext): Promise<Verdict>;
  /** Fills defaults the schema cannot express into `object` (a copy of the request's object). */
  applyDefaults(object: T, request: AdmissionRequest<T>, context: AdmissionContext): Promise<void>;
}

/**
 * Everything the mutating webhook changes, in place on `object` (v1beta1): the kind's defaults, and
 * on CREATE the operator's cleanup finalizer. The finalizer arrives with the object, so the
 * operator's first pass sends no PATCH for it (the operator still adds it to an object stored
 * without it: webhooks off, or a write that replaced metadata.finalizers). Offline admission
 * (src/admission) calls this too, so both store the same object.
 */
export async function mutateForAdmission<T>(rules: KindAdmission<T>, object: T, request: AdmissionRequest<T>, context: AdmissionContext): Promise<void> {
  await rules.applyDefaults(object, request, context);
  if (request.operation === 'CREATE') addCleanupFinalizer(object);
}

// Left alone when metadata.finalizers is not a list of strings: the API server's own validation names that field.
function addCleanupFinalizer(object: unknown): void {
  if (!isRecord(object) || !isRecord(object.metadata)) return;
  const finalizers: unknown = object.metadata.finalizers;
  if (finalizers === undefined) object.metadata.finalizers = [CLEANUP_FINALIZER];
  else if (Array.isArray(finalizers) && finalizers.every((f) => typeof f === 'string') && !finalizers.includes(CLEANUP_FINALIZER)) finalizers.push(CLEANUP_FINALIZER);
}

/** The versions of our group this server understands: the rules' own, and v1alpha1 converted to it. */
export const servedVersions: readonly string[] = [API_VERSION_V1BETA1, API_VERSION];

/** The HTTP path of a kind's validating or mutating webhook. */
export function webhookPath(purpose: 'validate' | 'mutate', resource: string): string {
  return `/${purpose}-${resource}`;
}

// Returns a response when the request is not one the rules should see, otherwise undefined.
function screen(rules: KindAdmission<unknown>, request: AdmissionRequest): AdmissionReviewResponse | undefined {
  const { kind } = request;
  if (kind.group !== API_GROUP || kind.kind !== rules.kind) {
    const got = `${kind.kind}${kind.group ? `.${kind.group}` : ''}`;
    return deny(request.uid, `this webhook admits ${rules.kind}.${API_GROUP} only, but was sent ${got}; fix the rules of the webhook configuration`, 400);
  }
  if (!servedVersions.includes(kind.version)) {
    return deny(
      request.uid,
      `${rules.kind} version ${kind.version} is not served by this webhook (served: ${servedVersions.join(', ')}); upgrade the operator or send ${API_GROUP}/${API_VERSION_V1BETA1}`,
      400,
    );
  }
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow(request.uid);
  if (!request.object) return deny(request.uid, `request.object is missing for ${request.operation} of a ${rules.kind}`, 400);
  if (typeof request.object.spec !== 'object' || request.object.spec === null || Array.isArray(request.object.spec)) {
    return deny(request.uid, `spec: the ${rules.kind} has no spec object; add one`, 422);
  }
  if (request.object.metadata?.deletionTimestamp) return allow(request.uid);
  return undefined;
}

/** `object` (one of ours, in any served version) as `version`; other content is returned as it is. */
function asVersion(object: KubernetesObject | undefined, version: string): KubernetesObject | undefined {
  if (!object || object.apiVersion === `${API_GROUP}/${version}`) return object;
  const converted = convertTo(object, `${API_GROUP}/${version}`);
  return converted.ok ? (converted.object as KubernetesObject) : object;
}

/** The request with its objects in the rules' version (v1beta1), and whether the client wrote v1alpha1. */
function inRulesVersion(request: AdmissionRequest): { request: AdmissionRequest; v1alpha1Client: boolean } {
  const v1alpha1Client = request.kind.version === API_VERSION || (request.requestKind?.group === API_GROUP && request.requestKind.version === API_VERSION);
  if (request.kind.version === API_VERSION_V1BETA1) return { request, v1alpha1Client };
  return {
    request: {
      ...request,
      kind: { ...request.kind, version: API_VERSION_V1BETA1 },
      object: asVersion(request.object, API_VERSION_V1BETA1),
      oldObject: asVersion(request.oldObject, API_VERSION_V1BETA1),
    },
    v1alpha1Client,
  };
}

// By name as well: Node's own errors (e.g. from crypto) come from another realm under jest's VM.
const isTypeError = (error: unknown): error is Error => error instanceof TypeError || (typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'TypeError');

/**
 * The rules' verdict, a refusal confirmed with live reads when `lookups` may lag (model-cache.ts):
 * a cache may still hold a model deleted or changed a moment ago, or miss one just created, so a
 * refusal is only given when the API server's current state confirms it. So is a rule's TypeError
 * over cached objects (the cache holds this replica's admitted writes before the API server has
 * stored them, and stored objects are the only ones the rules assume schema-valid).
 */
async function validateConfirmed<T>(rules: KindAdmission<T>, request: AdmissionRequest<T>, context: AdmissionContext): Promise<Verdict> {
  const live = context.liveLookups && context.liveLookups !== context.lookups ? context.liveLookups : undefined;
  if (!live) return rules.validate(request, context);
  try {
    const verdict = await rules.validate(request, context);
    if (verdict.denials.length === 0) return verdict;
  } catch (error) {
    if (!isTypeError(error)) throw error;
  }
  return rules.validate(request, { ...context, lookups: live });
}

/** Handler for `/validate-<resource>`. */
export function validatingHandler<T>(rules: KindAdmission<T>, context: AdmissionContext): AdmissionHandler {
  return async (received) => {
    const screened = screen(rules, received);
    if (screened) return screened;
    const { request, v1alpha1Client } = inRulesVersion(received);
    // A v1alpha1 client reads its own field names: messages about v1beta1 paths are renamed back.
    const own = (messages: readonly string[]) => (v1alpha1Client ? messages.map((m) => v1alpha1FieldNames(rules.kind, m)) : [...messages]);
    let verdict: Verdict;
    try {
      verdict = await validateConfirmed(rules, request as AdmissionRequest<T>, context);
    } catch (error) {
      // The API server validates the schema before validating webhooks run, so this only
      // happens for bodies that did not come through it.
      if (!isTypeError(error)) throw error;
      return deny(request.uid, `the ${rules.kind} does not match its schema (${error.message}); send an object the CRD accepts`, 422);
    }
    if (verdict.denials.length > 0) return deny(request.uid, denialMessage(own(verdict.denials)), verdict.code ?? 422, own(verdict.warnings));
    if (!request.dryRun) context.admitted?.({ ...(request.object as KubernetesObject), kind: rules.kind });
    return allow(request.uid, own(verdict.warnings));
  };
}

/**
 * Handler for `/mutate-<resource>`: answers with a JSON Patch of the defaults filled in, against
 * the object in the version it was sent in (a v1alpha1 one is defaulted as v1beta1 and converted back).
 */
export function mutatingHandler<T>(rules: KindAdmission<T>, context: AdmissionContext): AdmissionHandler {
  return async (received) => {
    const screened = screen(rules, received);
    if (screened) return screened;
    const { request } = inRulesVersion(received);
    const original = received.object as KubernetesObject;
    const defaulted = structuredClone(request.object as KubernetesObject);
    // Defaults are stored for good, so they read live, never a cache that may lag (only an agent's
    // modelName reads the cluster: model writes cost no request here).
    const live = context.liveLookups ? { ...context, lookups: context.liveLookups } : context;
    try {
      await mutateForAdmission(rules, defaulted as T, request as AdmissionRequest<T>, live);
    } catch (error) {
      // Mutation runs before schema validation: leave a malformed object to the schema's
      // error messages rather than denying it here with a less precise one.
      if (!isTypeError(error)) throw error;
      return allow(request.uid);
    }
    return allowWithPatch(request.uid, jsonPatch(original, asVersion(defaulted, received.kind.version) as KubernetesObject));
  };
}

/** The route table for a set of kinds: `/validate-<resource>` and `/mutate-<resource>` each. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each kind's rules take its own object type
export function admissionRoutes(kinds: readonly KindAdmission<any>[], context: AdmissionContext): Map<string, AdmissionHandler> {
  const routes = new Map<string, AdmissionHandler>();
  for (const rules of kinds) {
    routes.set(webhookPath('validate', rules.resource), validatingHandler(rules, context));
    routes.set(webhookPath('mutate', rules.resource), mutatingHandler(rules, context));
  }
  return routes;
}
