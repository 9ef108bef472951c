// The cluster state admission rules read. Rules depend on the ClusterLookups interface only, so
// they stay plain functions; `kubernetesLookups` is the real implementation over the API server.
// Every read is uncached (admission must see the latest state) and bounded in time, because the
// API server gives the whole webhook call 10 s by default.
import * as k8s from '@kubernetes/client-node';
import { API_GROUP, API_VERSION } from '../api/common';
import { LLMMODEL_KIND, LLMMODEL_PLURAL } from '../api/llmmodel';
import { PASSTHROUGHMODEL_KIND, PASSTHROUGHMODEL_PLURAL } from '../api/passthroughmodel';
import type { ApiClients } from './kube-clients';
import type { KubernetesObject, UserInfo } from './review';

/** Kinds an AgentDeployment or a name-collision check may look up. */
export type ModelKind = typeof LLMMODEL_KIND | typeof PASSTHROUGHMODEL_KIND;

export interface AccessReviewResult {
  readonly allowed: boolean;
  /** The authorizer's explanation, when it gave one. */
  readonly reason?: string;
}

export interface ClusterLookups {
  /** Labels of a namespace; undefined when the namespace does not exist. */
  namespaceLabels(namespace: string): Promise<Readonly<Record<string, string>> | undefined>;
  /** A model object; undefined when it is absent or its CRD is not installed. */
  getModel(kind: ModelKind, namespace: string, name: string): Promise<KubernetesObject | undefined>;
  /** A SubjectAccessReview: may `user` `get` the Secret `namespace/name`? Throws when the review cannot be made. */
  userMayGetSecret(user: UserInfo, namespace: string, name: string): Promise<AccessReviewResult>;
}

const pluralOf: Record<ModelKind, string> = {
  [LLMMODEL_KIND]: LLMMODEL_PLURAL,
  [PASSTHROUGHMODEL_KIND]: PASSTHROUGHMODEL_PLURAL,
};

function statusCode(error: unknown): number | undefined {
  return error instanceof k8s.ApiException ? error.code : undefined;
}

/** A short, secret-free description of an API error for a denial message. */
export function describeApiError(error: unknown): string {
  if (error instanceof k8s.ApiException) {
    const body = error.body as { message?: unknown } | string | undefined;
    let message: unknown = typeof body === 'object' && body !== null ? body.message : undefined;
    if (message === undefined && typeof body === 'string') {
      try {
        message = (JSON.parse(body) as { message?: unknown }).message;
      } catch {
        message = undefined;
      }
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
export function kubernetesLookups(clients: ApiClients, options: { timeoutMs?: number } = {}): ClusterLookups {
  const core = clients.make(k8s.CoreV1Api);
  const custom = clients.make(k8s.CustomObjectsApi);
  const authorization = clients.make(k8s.AuthorizationV1Api);
  const timeoutMs = options.timeoutMs ?? 3000;

  return {
    async namespaceLabels(namespace) {
      try {
        const found = await bounded(`reading namespace ${namespace}`, core.readNamespace({ name: namespace }), timeoutMs);
        return found.metadata?.labels ?? {};
      } catch (error) {
        if (statusCode(error) === 404) return undefined;
        throw new Error(`reading namespace ${namespace}: ${describeApiError(error)}`);
      }
    },

    async getModel(kind, namespace, name) {
      try {
        return (await bounded(
          `reading ${kind} ${namespace}/${name}`,
          custom.getNamespacedCustomObject({ group: API_GROUP, version: API_VERSION, namespace, plural: pluralOf[kind], name }),
          timeoutMs,
        )) as KubernetesObject;
      } catch (error) {
        // 404 covers both "no such object" and "CRD not installed": either way there is no model.
        if (statusCode(error) === 404) return undefined;
        throw new Error(`reading ${kind} ${namespace}/${name}: ${describeApiError(error)}`);
      }
    },

    async userMayGetSecret(user, namespace, name) {
      const review = await bounded(
        'SubjectAccessReview',
        authorization.createSubjectAccessReview({
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user: user.username,
              uid: user.uid,
              groups: user.groups ? [...user.groups] : undefined,
              extra: user.extra ? Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) : undefined,
              resourceAttributes: { namespace, verb: 'get', group: '', version: 'v1', resource: 'secrets', name },
            },
          },
        }),
        timeoutMs,
      ).catch((error: unknown) => {
        throw new Error(`SubjectAccessReview failed: ${describeApiError(error)}`);
      });
      return { allowed: review.status?.allowed === true, reason: review.status?.reason || undefined };
    },
  };
}
