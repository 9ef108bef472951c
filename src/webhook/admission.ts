// Turns per-kind rules into HTTP handlers for the six webhook paths. Checks every kind shares
// live here once: the request is for the kind and version the path serves, there is an object,
// and objects that are being deleted are never blocked (finalizer removal must always succeed).
import { API_GROUP, API_VERSION } from '../api/common';
import { jsonPatch } from './json-patch';
import type { ClusterLookups } from './lookups';
import { type AdmissionRequest, type AdmissionReviewResponse, type KubernetesObject, allow, allowWithPatch, deny } from './review';
import type { AdmissionHandler } from './server';
import { type Verdict, denialMessage } from './verdict';

/** What rules may consult besides the request. */
export interface AdmissionContext {
  /** The namespace the operator runs in (`POD_NAMESPACE`); models must live there. */
  readonly operatorNamespace: string;
  /** Namespaces whose AgentDeployments this installation reconciles (the operator namespace first). */
  readonly agentNamespaces: readonly string[];
  readonly lookups: ClusterLookups;
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

/** The versions of our group this server understands. */
export const servedVersions: readonly string[] = [API_VERSION];

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
      `${rules.kind} version ${kind.version} is not served by this webhook (served: ${servedVersions.join(', ')}); upgrade the operator or send ${API_GROUP}/${API_VERSION}`,
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

/** Handler for `/validate-<resource>`. */
export function validatingHandler<T>(rules: KindAdmission<T>, context: AdmissionContext): AdmissionHandler {
  return async (request) => {
    const screened = screen(rules, request);
    if (screened) return screened;
    let verdict: Verdict;
    try {
      verdict = await rules.validate(request as AdmissionRequest<T>, context);
    } catch (error) {
      // The API server validates the schema before validating webhooks run, so this only
      // happens for bodies that did not come through it.
      if (!(error instanceof TypeError)) throw error;
      return deny(request.uid, `the ${rules.kind} does not match its schema (${error.message}); send an object the CRD accepts`, 422);
    }
    if (verdict.denials.length > 0) return deny(request.uid, denialMessage(verdict.denials), verdict.code ?? 422, verdict.warnings);
    return allow(request.uid, verdict.warnings);
  };
}

/** Handler for `/mutate-<resource>`: answers with a JSON Patch of the defaults filled in. */
export function mutatingHandler<T>(rules: KindAdmission<T>, context: AdmissionContext): AdmissionHandler {
  return async (request) => {
    const screened = screen(rules, request);
    if (screened) return screened;
    const original = request.object as KubernetesObject;
    const defaulted = structuredClone(original);
    try {
      await rules.applyDefaults(defaulted as T, request as AdmissionRequest<T>, context);
    } catch (error) {
      // Mutation runs before schema validation: leave a malformed object to the schema's
      // error messages rather than denying it here with a less precise one.
      if (!(error instanceof TypeError)) throw error;
      return allow(request.uid);
    }
    return allowWithPatch(request.uid, jsonPatch(original, defaulted));
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
