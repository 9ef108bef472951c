// The cluster state admission rules read. Rules depend on the ClusterLookups interface only, so
// they stay plain functions; `kubernetesLookups` is the real implementation over the API server.
// Every read here is uncached and bounded in time, because the API server gives the whole webhook
// call 10 s by default. The server reads models through watches instead (model-cache.ts) and comes
// here for the rest, before the watches have listed, and to confirm every refusal.
import { API_GROUP, API_GROUP_VERSION_V1BETA1 } from '../api/common';
import { LLMMODEL_KIND, LLMMODEL_PLURAL } from '../api/llmmodel';
import { PASSTHROUGHMODEL_KIND, PASSTHROUGHMODEL_PLURAL } from '../api/passthroughmodel';
import { KubeApiError, type KubeObject, type KubeRest, objectRef } from '../kube/rest';
import type { ServedId } from '../translate/gateway/served-ids';
import type { KubernetesObject, UserInfo } from './review';

/** Kinds an AgentDeployment or a name-collision check may look up. */
export type ModelKind = typeof LLMMODEL_KIND | typeof PASSTHROUGHMODEL_KIND;

/** What a referenced object may be: the resources the Secret guard reviews. */
export type ReadableResource = 'secrets' | 'configmaps';

export interface AccessReviewResult {
  readonly allowed: boolean;
  /** The authorizer's explanation, when it gave one. */
  readonly reason?: string;
}

export interface ClusterLookups {
  /** A model object; undefined when it is absent or its CRD is not installed. */
  getModel(kind: ModelKind, namespace: string, name: string): Promise<KubernetesObject | undefined>;
  /** Every model of a kind in a namespace; empty when its CRD is not installed. */
  listModels(kind: ModelKind, namespace: string): Promise<KubernetesObject[]>;
  /**
   * The models of both kinds in `namespace` that serve one of `wanted.ids`, or may generate a name
   * the model `wanted.generatedNamesOf` generates: all the model-id and generated-name rules can
   * find a clash with, and possibly more (the rules filter). Optional: an index answers it (the
   * model cache); without it the rules read every model.
   */
  modelsSharing?(namespace: string, wanted: ModelsWanted): Promise<KubernetesObject[]>;
  /** A SubjectAccessReview: may `user` `get` the Secret (or ConfigMap) `namespace/name`? Throws when the review cannot be made. */
  userMayGet(user: UserInfo, namespace: string, resource: ReadableResource, name: string): Promise<AccessReviewResult>;
  /**
   * A SubjectAccessReview: may `user` bind an agent to the model (verb `bind` on `llmmodels` or
   * `passthroughmodels` of llm.nebari.dev, by name)? Throws when the review cannot be made.
   */
  userMayBindModel(user: UserInfo, namespace: string, kind: ModelKind, name: string): Promise<AccessReviewResult>;
}

/** What a rule looks for in other models: served ids, or the generated names of a model name. */
export interface ModelsWanted {
  readonly ids?: readonly ServedId[];
  readonly generatedNamesOf?: string;
}

/** The RBAC verb that lets a user bind an AgentDeployment to a restricted model (src/webhook/agentdeployment.ts). */
export const BIND_MODEL_VERB = 'bind';
const MODEL_RESOURCES: Record<ModelKind, string> = { [LLMMODEL_KIND]: LLMMODEL_PLURAL, [PASSTHROUGHMODEL_KIND]: PASSTHROUGHMODEL_PLURAL };

function statusCode(error: unknown): number | undefined {
  return error instanceof KubeApiError ? error.code : undefined;
}

/** A short, secret-free description of an API error for a denial message. */
export function describeApiError(error: unknown): string {
  if (error instanceof KubeApiError) {
    let message: unknown;
    try {
      message = (JSON.parse(error.body) as { message?: unknown }).message;
    } catch {
      message = undefined;
    }
    return `API server answered ${error.code}${typeof message === 'string' ? `: ${message}` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
}

function bounded<T>(what: string, promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** ClusterLookups over the API server with the operator's own credentials. */
export function kubernetesLookups(rest: KubeRest, options: { timeoutMs?: number } = {}): ClusterLookups {
  const timeoutMs = options.timeoutMs ?? 3000;

  return {
    async getModel(kind, namespace, name) {
      try {
        // undefined covers both "no such object" and "CRD not installed": either way there is no model.
        return (await bounded(
          `reading ${kind} ${namespace}/${name}`,
          rest.get(objectRef(API_GROUP_VERSION_V1BETA1, kind, name, namespace)),
          timeoutMs,
        )) as KubernetesObject | undefined;
      } catch (error) {
        if (statusCode(error) === 404) return undefined;
        throw new Error(`reading ${kind} ${namespace}/${name}: ${describeApiError(error)}`);
      }
    },

    async listModels(kind, namespace) {
      try {
        const list = await bounded(`listing ${kind} in ${namespace}`, rest.list(API_GROUP_VERSION_V1BETA1, kind, { namespace }), timeoutMs);
        return list.items as KubernetesObject[];
      } catch (error) {
        if (statusCode(error) === 404 || (error as Error).name === 'KindNotServedError') return [];
        throw new Error(`listing ${kind} in ${namespace}: ${describeApiError(error)}`);
      }
    },

    userMayGet: (user, namespace, resource, name) => review(user, { namespace, verb: 'get', group: '', version: 'v1', resource, name }),
    userMayBindModel: (user, namespace, kind, name) => review(user, { namespace, verb: BIND_MODEL_VERB, group: API_GROUP, resource: MODEL_RESOURCES[kind], name }),
  };

  async function review(user: UserInfo, resourceAttributes: Record<string, string>): Promise<AccessReviewResult> {
    const body = {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      metadata: {},
      spec: {
        user: user.username,
        uid: user.uid,
        groups: user.groups ? [...user.groups] : undefined,
        extra: user.extra ? Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) : undefined,
        resourceAttributes,
      },
    };
    const answer = await bounded(
      'SubjectAccessReview',
      rest.create<KubeObject & { status?: { allowed?: boolean; reason?: string } }>(body),
      timeoutMs,
    ).catch((error: unknown) => {
      throw new Error(`SubjectAccessReview failed: ${describeApiError(error)}`);
    });
    return { allowed: answer.status?.allowed === true, reason: answer.status?.reason || undefined };
  }
}
