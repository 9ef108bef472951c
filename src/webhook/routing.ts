// Admission rules for `spec.routing` (docs/routing.md). Field rules need only the object; the
// target rules read the namespace's models: every fallback and split model must be a
// PassthroughModel that exists, serves the id it is sent, and does not lead back to this model.
import type { LLMModelRouting, PassthroughRouting } from '../api/routing';
import type { ServingModel } from '../translate/gateway/served-ids';
import type { ClusterLookups } from './lookups';
import { type BindingCheck, checkModelBinding } from './model-binding';
import type { UserInfo } from './review';
import type { Findings } from './verdict';

/** Why an InferencePool cannot take part in fallback or splits (envoyproxy/ai-gateway#1256). */
export const INFERENCE_POOL_MIX =
  'Envoy AI Gateway v1.1 routes a rule either to one InferencePool or to provider backends, never both (envoyproxy/ai-gateway#1256)';

interface Target {
  readonly name: string;
  readonly model?: string;
}

/** What the rules read of a model in the namespace. */
type RoutedModel = ServingModel & { readonly spec?: ServingModel['spec'] & { readonly models?: { readonly catchAll?: boolean }; readonly routing?: PassthroughRouting } };

function targets(routing: PassthroughRouting | undefined): Array<Target & { field: string }> {
  return [
    ...(routing?.fallback ?? []).map((t, i) => ({ ...t, field: `spec.routing.fallback[${i}]` })),
    ...(routing?.split ?? []).map((t, i) => ({ ...t, field: `spec.routing.split[${i}]` })),
  ];
}

/** LLMModel: retries and timeouts only. */
export function llmModelRoutingFindings(routing: LLMModelRouting | undefined, findings: Findings): void {
  for (const list of ['fallback', 'split'] as const) {
    if ((routing?.[list]?.length ?? 0) > 0) {
      findings.deny(
        `spec.routing.${list} is not supported for an LLMModel: ${INFERENCE_POOL_MIX}; remove it` +
          (list === 'fallback' ? ', or give clients a PassthroughModel whose fallback lists providers' : ''),
      );
    }
  }
}

/** PassthroughModel: the lists are well-formed (no duplicates, not this model, some weight above 0). */
export function passthroughRoutingFindings(modelName: string | undefined, routing: PassthroughRouting | undefined, findings: Findings): void {
  if (!routing) return;
  for (const list of ['fallback', 'split'] as const) {
    const seen = new Map<string, number>();
    (routing[list] ?? []).forEach((t, i) => {
      const field = `spec.routing.${list}[${i}].name`;
      if (t.name === modelName) findings.deny(`${field}: "${t.name}" is this model itself; name another PassthroughModel`);
      const first = seen.get(t.name);
      if (first !== undefined) findings.deny(`${field}: "${t.name}" is already listed at spec.routing.${list}[${first}]; remove the duplicate`);
      else seen.set(t.name, i);
    });
  }
  for (const [i, s] of (routing.split ?? []).entries()) {
    if ((routing.fallback ?? []).some((f) => f.name === s.name)) {
      findings.deny(`spec.routing.split[${i}].name: "${s.name}" is also in spec.routing.fallback; a split model already takes requests, so remove it from one list`);
    }
  }
  if (routing.weight !== undefined && (routing.split?.length ?? 0) === 0) {
    findings.deny('spec.routing.weight applies only with spec.routing.split; remove it or list the models to split with');
  }
  if ((routing.split?.length ?? 0) > 0 && (routing.weight ?? 100) === 0 && routing.split!.every((s) => s.weight === 0)) {
    findings.deny('spec.routing: every weight is 0, so no request could be routed; give spec.routing.weight or one split model a weight above 0');
  }
}

/** The ids a model declares, or undefined when it takes every id (catch-all). */
function servedIds(model: RoutedModel): readonly string[] | undefined {
  return model.spec?.models?.catchAll === true ? undefined : (model.spec?.models?.declared ?? []);
}

/** A path from `start` through fallback and split lists back to `home`, if any (`home` uses its new spec). */
function cycleThrough(home: string, start: string, byName: ReadonlyMap<string, RoutedModel>): string[] | undefined {
  const seen = new Set<string>();
  const walk = (name: string, path: string[]): string[] | undefined => {
    if (name === home) return path;
    if (seen.has(name)) return undefined;
    seen.add(name);
    for (const next of targets(byName.get(name)?.spec?.routing)) {
      const found = walk(next.name, [...path, next.name]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, [start]);
}

/** Each fallback and split model exists as a PassthroughModel, serves the id it gets, and leads nowhere back here. */
export function routingTargetFindings(model: RoutedModel, namespace: string, others: readonly RoutedModel[], findings: Findings): void {
  const name = model.metadata?.name ?? '';
  const passthrough = new Map(others.filter((o) => o.kind === 'PassthroughModel' && o.metadata?.name !== name).map((o) => [o.metadata?.name ?? '', o]));
  passthrough.set(name, model);
  const own = servedIds(model);
  for (const t of targets(model.spec?.routing)) {
    const target = t.name === name ? undefined : passthrough.get(t.name);
    if (!target) {
      if (t.name === name) continue; // refused by the field rules
      const llm = others.some((o) => o.kind === 'LLMModel' && o.metadata?.name === t.name);
      findings.deny(
        llm
          ? `${t.field}.name: "${t.name}" is an LLMModel, and ${INFERENCE_POOL_MIX}; name a PassthroughModel`
          : `${t.field}.name: there is no PassthroughModel "${t.name}" in "${namespace}"; create it first or remove it from the list`,
      );
      continue;
    }
    const theirs = servedIds(target);
    if (theirs !== undefined) {
      const sent = t.model !== undefined ? [t.model] : (own ?? []);
      const missing = sent.filter((id) => !theirs.includes(id));
      if (missing.length > 0 || (t.model === undefined && own === undefined)) {
        findings.deny(
          `${t.field}: PassthroughModel "${t.name}" serves ${theirs.map((id) => `"${id}"`).join(', ') || 'no declared id'}, not ${t.model === undefined && own === undefined ? 'every id this catch-all model takes' : missing.map((id) => `"${id}"`).join(', ')}; ` +
            `set ${t.field}.model to the id it serves (the gateway sends that id to its provider), or declare the id there`,
        );
      }
    }
    const cycle = cycleThrough(name, t.name, passthrough);
    if (cycle) findings.deny(`${t.field}.name: "${t.name}" leads back to this model (${[name, ...cycle].join(' -> ')}); remove one link of the cycle`);
  }
}

/**
 * Who may route a model's requests to another model: the target's provider then answers them with
 * the target's credential, for whoever holds a key of this model, so naming a target is a way to
 * use its provider and key. Each fallback or split model the change adds needs the RBAC verb
 * `bind` on it (the right that binds an agent to a model), checked by a SubjectAccessReview as
 * the requesting user. Fail closed. Targets already listed before the change are not re-checked.
 */
export async function checkRoutingTargetsBinding(
  routing: PassthroughRouting | undefined,
  oldRouting: PassthroughRouting | undefined,
  request: { user: UserInfo; namespace: string },
  lookups: ClusterLookups,
  findings: Findings,
): Promise<void> {
  const before = new Set(targets(oldRouting).map((t) => t.name));
  for (const t of targets(routing).filter((x) => !before.has(x.name))) {
    const check: BindingCheck = {
      field: `${t.field}.name`,
      kind: 'PassthroughModel',
      name: t.name,
      namespace: request.namespace,
      action: 'route requests to',
      refusal: (who) => `${who} may not route requests to PassthroughModel "${t.name}", whose provider would answer them with its credential`,
      alternative: 'remove it',
    };
    await checkModelBinding(check, request.user, lookups, findings);
  }
}
