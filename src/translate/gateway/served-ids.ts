// The model ids (the `model` field of a request) each model answers on each endpoint. Every model
// of the release namespace shares the two endpoints, and when two models declare the same id the
// request reaches whichever model's route is oldest: re-creating either moves the traffic without
// a word. The webhook refuses a model that would declare an id another model already serves.
import { ENDPOINT_NAMES, type EndpointName } from './names';

/** What the check reads of a model (either kind, either API version). */
export interface ServingModel {
  readonly kind?: string;
  readonly metadata?: { readonly name?: string; readonly deletionTimestamp?: string };
  readonly spec?: {
    readonly model?: { readonly name?: string };
    readonly models?: { readonly declared?: readonly string[] };
    readonly endpoints?: Partial<Record<EndpointName, { readonly enabled?: boolean }>>;
  };
}

export interface ServedId {
  readonly endpoint: EndpointName;
  readonly id: string;
}

/** The field that declares a kind's model ids. */
export function modelIdsField(kind: string | undefined): string {
  return kind === 'LLMModel' ? 'spec.model.name' : 'spec.models.declared';
}

/** The ids a model declares, on each endpoint it enables (both unless disabled). */
export function servedModelIds(model: ServingModel): ServedId[] {
  const ids = model.kind === 'LLMModel' ? [model.spec?.model?.name] : [...(model.spec?.models?.declared ?? [])];
  const endpoints = ENDPOINT_NAMES.filter((e) => model.spec?.endpoints?.[e]?.enabled !== false);
  return endpoints.flatMap((endpoint) => [...new Set(ids)].filter((id): id is string => typeof id === 'string' && id !== '').map((id) => ({ endpoint, id })));
}

/** The entries of `mine` that `theirs` holds too. */
export function sharedIds(mine: readonly ServedId[], theirs: readonly ServedId[]): ServedId[] {
  const held = new Set(theirs.map(servedIdKey));
  return mine.filter((s) => held.has(servedIdKey(s)));
}

/** One string per endpoint and id, for sets and maps of them. */
export function servedIdKey(s: ServedId): string {
  return `${s.endpoint}\0${s.id}`;
}

/** The ids `model` declares that another model, not being deleted, already serves on the same endpoint. */
export function duplicateModelIds(model: ServingModel, others: readonly ServingModel[]): Array<ServedId & { readonly other: string }> {
  // The webhook asks this against every model of the namespace: one set of mine, not one of each other's.
  const mine = new Set(servedModelIds(model).map(servedIdKey));
  const found: Array<ServedId & { other: string }> = [];
  for (const other of others) {
    if (other.metadata?.deletionTimestamp) continue;
    if (other.kind === model.kind && other.metadata?.name === model.metadata?.name) continue;
    for (const s of servedModelIds(other)) if (mine.has(servedIdKey(s))) found.push({ ...s, other: `${other.kind} ${other.metadata?.name}` });
  }
  return found;
}
