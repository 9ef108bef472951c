// The PodMonitor of an LLMModel's serving pods (spec.serving.monitoring.enabled), applied apart from
// the provider's objects: its CRD is the Prometheus Operator's, which a cluster may lack, and a
// model must serve without it. Its state is the MonitoringReady condition: Applied; False with
// PodMonitorCRDUnavailable or the apply failure; and,
// once monitoring is turned off, Disabled after the PodMonitor is deleted. A model that never
// asked for monitoring gets no such condition and costs no request. A missing CRD is looked for
// again at the provider poll interval (60 s), not the 15 s of a missing gateway CRD: the model is
// Ready meanwhile, and each look re-applies its provider objects.
import type { Manifest } from '../translate/providers';
import { POD_MONITOR_API_VERSION, POD_MONITOR_KIND } from '../translate/providers/serving-objects';
import { deleteIfControlled } from './generated-objects';
import { requeue, type ReconcileDeps } from './reconcile-context';
import { AdoptionConflict, applyObject } from './runtime/apply';
import type { Condition, ConditionInput } from './runtime/conditions';
import type { KubeObject } from '../kube/rest';

export const MONITORING_CONDITION = 'MonitoringReady';

export interface PodMonitorOutcome {
  readonly condition?: ConditionInput;
  readonly requeueAfterMs?: number;
}

/**
 * Applies the model's PodMonitor, or deletes it once monitoring is off; says so in MonitoringReady.
 * `lookAgainMs`: when to look again for a missing PodMonitor CRD.
 */
export async function syncPodMonitor(deps: ReconcileDeps, model: KubeObject, podMonitor: { name: string; object?: Manifest } | undefined, lookAgainMs: number): Promise<PodMonitorOutcome> {
  if (!podMonitor) return {};
  const served = await deps.client.isServed(POD_MONITOR_API_VERSION, POD_MONITOR_KIND);
  if (podMonitor.object) {
    if (!served) {
      const message = `the API server does not serve ${POD_MONITOR_KIND}.${POD_MONITOR_API_VERSION}, so the serving pods are not scraped (the model serves regardless); install the Prometheus Operator's CRDs (for example with kube-prometheus-stack), or set spec.serving.monitoring.enabled to false`;
      return { condition: { type: MONITORING_CONDITION, status: false, reason: 'PodMonitorCRDUnavailable', message }, requeueAfterMs: lookAgainMs };
    }
    try {
      await applyObject(deps.client, podMonitor.object as unknown as KubeObject);
    } catch (err) {
      const reason = err instanceof AdoptionConflict ? 'Conflict' : 'ApplyFailed';
      return { condition: { type: MONITORING_CONDITION, status: false, reason, message: `${POD_MONITOR_KIND} ${podMonitor.name}: ${(err as Error).message}` }, requeueAfterMs: reason === 'Conflict' ? requeue.conflict : requeue.applyFailed };
    }
    return { condition: { type: MONITORING_CONDITION, status: true, reason: 'Applied', message: `${POD_MONITOR_KIND} ${podMonitor.name} selects the serving pods; Prometheus scrapes their engine metrics at /metrics` } };
  }
  // Off: only a model that had monitoring (its condition says so) can have a PodMonitor to delete.
  const previous = ((model.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === MONITORING_CONDITION);
  if (!previous || previous.reason === 'Disabled') return {};
  if (served) await deleteIfControlled(deps.client, { apiVersion: POD_MONITOR_API_VERSION, kind: POD_MONITOR_KIND, name: podMonitor.name, namespace: model.metadata.namespace ?? '' }, model.metadata.uid);
  return { condition: { type: MONITORING_CONDITION, status: false, reason: 'Disabled', message: `spec.serving.monitoring.enabled is not true; ${POD_MONITOR_KIND} ${podMonitor.name} is deleted` } };
}
