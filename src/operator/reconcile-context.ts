// What every reconciler receives, and the status write they share.
import { isDeepStrictEqual } from 'node:util';
import type { GatewayContext } from '../translate/gateway';
import { applyStatus } from './runtime/apply';
import { Condition, ConditionInput, mergeConditions } from './runtime/conditions';
import { EventRecorder } from '../runtime/events';
import { KubeRest, KubeObject, isNotFound } from '../kube/rest';
import type { ReconcileResult } from './runtime/controller';
import { Logger } from '../runtime/log';
import type { ApiKeyInfo } from './api-key-info';
import type { PortalSecretsAccess } from './portal-secrets-role';

export interface ReconcileDeps {
  client: KubeRest;
  events: EventRecorder;
  gateway: GatewayContext;
  /** Set when the operator cannot publish models (see OperatorConfig.configurationProblem). */
  configurationProblem?: string;
  /** How long a deletion may wait for a generated object before the model reports CleanupBlocked. @default 120 s */
  cleanupBlockedAfterMs?: number;
  /** The `nls_api_key_info` series, kept by the model reconcilers (absent in tests that do not read them). */
  keyInfo?: ApiKeyInfo;
  /** The key portal's Secret Role (with portal.enabled): a model's key Secret is named there before the model is Ready. */
  portalSecrets?: PortalSecretsAccess;
  log: Logger;
}

/** How long to wait before looking again for a CRD, a pod or a generated object. */
export const requeue = {
  /** A gateway or provider CRD is missing: it may be installed any time. */
  crdMissing: 15_000,
  /** Waiting for the AI Gateway controller to remove a generated HTTPRoute. */
  deletionWait: 2_000,
  /** A deletion reported as CleanupBlocked: look again, less often. */
  cleanupBlocked: 10_000,
  /** A referenced Secret or model is missing. */
  dependencyMissing: 10_000,
  /** Pods are downloading or starting. */
  podsProgressing: 15_000,
  /** An apply failed for a reason that may pass. */
  applyFailed: 60_000,
  /** A generated object's name is taken by someone else's object: noticed soon after it is removed. */
  conflict: 10_000,
  /** A Ready model's provider resource (KAITO, Dynamo, KubeRay, llm-d), polled for status changes. */
  providerStatus: 60_000,
};

export interface StatusUpdate {
  phase: string;
  conditions: ConditionInput[];
  extra?: Record<string, unknown>;
}

/**
 * Writes status (phase, conditions, observedGeneration, extra fields) by server-side apply of the
 * status subresource, skipping the request when nothing would change. Returns the conditions
 * whose status or reason changed, so callers can emit one Event per real transition.
 */
export async function writeStatus(client: KubeRest, obj: KubeObject, update: StatusUpdate): Promise<ConditionInput[]> {
  const current = (obj.status ?? {}) as { conditions?: Condition[]; phase?: string; observedGeneration?: number };
  const conditions = mergeConditions(current.conditions, update.conditions, obj.metadata.generation);
  // JSON round trip drops undefined fields, which the stored status never has.
  const status = JSON.parse(JSON.stringify({ ...(update.extra ?? {}), phase: update.phase, observedGeneration: obj.metadata.generation, conditions })) as Record<string, unknown>;
  const changed = update.conditions.filter((c) => {
    const prior = current.conditions?.find((p) => p.type === c.type);
    const s = typeof c.status === 'boolean' ? (c.status ? 'True' : 'False') : c.status;
    return !prior || prior.status !== s || prior.reason !== c.reason;
  });
  if (isDeepStrictEqual(pick(current, Object.keys(status)), status)) return changed;
  try {
    await applyStatus(client, { apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace }, status });
  } catch (err) {
    // The object went away between reading and writing: nothing to report on.
    if (!isNotFound(err)) throw err;
  }
  return changed;
}

function pick(obj: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k];
  return out;
}

/** Condition types that report a problem when True (the others report one when False). */
const PROBLEM_WHEN_TRUE = new Set(['CleanupBlocked']);

/** Whether a condition is in its problem state; Unknown (the operator cannot tell, or was told not to look) is not one. */
function isProblem(c: ConditionInput): boolean {
  const status = typeof c.status === 'boolean' ? (c.status ? 'True' : 'False') : c.status;
  if (status === 'Unknown') return false;
  return (status === 'True') === PROBLEM_WHEN_TRUE.has(c.type);
}

/**
 * Events for the conditions that changed: one Warning per condition that turned to its problem
 * state (each is worth its own line in `kubectl describe`), and the rest of one pass folded into a
 * single Normal Event (a new model's first pass would otherwise cost one write per condition).
 * An Unknown condition joins the Normal Event: `Programmed=Unknown/ProxyStatusOff` is the chart's
 * setting, not a problem, and a Warning for it on every new model was a second write each.
 */
export async function recordTransitions(events: EventRecorder, obj: KubeObject, changed: ConditionInput[]): Promise<void> {
  const rest: ConditionInput[] = [];
  for (const c of changed) {
    if (isProblem(c)) await events.record(obj, 'Warning', c.reason, `${c.type}: ${c.message ?? c.reason}`);
    else rest.push(c);
  }
  if (rest.length === 0) return;
  const reason = rest.length === 1 ? rest[0].reason : 'Reconciled';
  await events.record(obj, 'Normal', reason, rest.map((c) => `${c.type}: ${c.message ?? c.reason}`).join('; '));
}

/**
 * The operator itself is misconfigured (e.g. no base domain): say so on the model instead of
 * publishing. No requeue: the fix is a `helm upgrade`, which starts a new pod that reconciles all.
 */
export async function reportNotConfigured(deps: ReconcileDeps, obj: KubeObject, problem: string): Promise<ReconcileResult> {
  const changed = await writeStatus(deps.client, obj, {
    phase: 'Error',
    conditions: [{ type: 'Ready', status: false, reason: 'OperatorNotConfigured', message: `the operator is not configured: ${problem}` }],
  });
  await recordTransitions(deps.events, obj, changed);
  return {};
}
