// Offline admission: what the API server with this project's CRDs and webhooks would decide
// about an object, without a cluster. Synth's custom builds and `nls validate` use it.
import { API_GROUP } from '../api/common';
import { crdObjects } from '../api/kinds';
import { admitAgentDeployment } from './agentdeployment';
import { celCostProblems } from './cel-cost';
import type { OfflineContext } from './admit';
import { admitLLMModel } from './llmmodel';
import { admitPassthroughModel } from './passthroughmodel';
import type { AdmissionResult } from './result';

export type { OfflineContext } from './admit';
export { type AdmissionResult, type Problem, describeProblem } from './result';
export { admitAgentDeployment, admitLLMModel, admitPassthroughModel };
export { celCostProblems } from './cel-cost';

let costProblems: readonly string[] | undefined;

/**
 * What the oldest supported Kubernetes (1.32) would refuse in our CRDs for the estimated cost of
 * their CEL rules, one line each; computed once per process. Empty when every CRD is accepted.
 */
export function crdCostProblems(): readonly string[] {
  costProblems ??= crdObjects().flatMap((crd) => celCostProblems(crd));
  return costProblems;
}

const byKind: Record<string, (object: Record<string, unknown>, context: OfflineContext, old?: Record<string, unknown>) => Promise<AdmissionResult>> = {
  LLMModel: admitLLMModel,
  PassthroughModel: admitPassthroughModel,
  AgentDeployment: admitAgentDeployment,
};

/** The kinds admitted offline. */
export const admittedKinds: readonly string[] = Object.keys(byKind);

/** True for an object of our API group (any version), which `admit` must decide. */
export function isOurObject(object: unknown): boolean {
  const apiVersion = (object as { apiVersion?: unknown } | null)?.apiVersion;
  return typeof apiVersion === 'string' && apiVersion.split('/')[0] === API_GROUP;
}

/** Admits one object of any of our kinds; an unknown kind or version is a problem, not an exception. */
export function admit(object: Record<string, unknown>, context: OfflineContext, oldObject?: Record<string, unknown>): Promise<AdmissionResult> {
  const admitKind = typeof object.kind === 'string' ? byKind[object.kind] : undefined;
  if (!admitKind) {
    return Promise.resolve({
      admitted: false,
      object,
      problems: [{ field: 'kind', message: `Invalid value: ${JSON.stringify(object.kind)}: not a kind of ${API_GROUP}; use ${admittedKinds.join(', ')}`, source: 'schema' }],
      warnings: [],
      unknownFields: [],
    });
  }
  return admitKind(object, context, oldObject);
}
