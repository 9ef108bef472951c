// The parts of a model's reconcile that LLMModel and PassthroughModel share: the finalizer's
// ordered teardown (gateway objects in the translation's safe order, then the API keys; a wait
// that lasts past a bound is reported as CleanupBlocked), and
// publishing through the gateway translation with one condition per endpoint.
import { controllerOwnerKey } from './runtime/object-key';
import { ModelRef } from '../translate/keys/api-keys';
import { desiredGatewayObjects, enabledEndpoints, gatewayTeardown, keyTiersFromMetadata, EndpointName, GatewayContext } from '../translate/gateway';
import type { ObjectReference } from '../translate/gateway/objects';
import { KeyObjectConflict, type KeyObjectsRead, deleteApiKeyObjects, ensureApiKeyObjects, readApiKeyObjects } from './api-key-objects';
import { ExternalEndpointPeers } from './endpoint-peers';
import type { KeyObjectCache } from './key-object-cache';
import { PROGRAMMED_CONDITION, ProxyStatus } from './proxy-status';
import { revokeDueKeys } from './key-revocation';
import { describeErrors, runDeletions, syncGatewayObjects } from './generated-objects';
import { DEFAULT_CLEANUP_BLOCKED_AFTER_MS, cleanupBlockedCondition, inspectBlockedWait } from './cleanup-blocked';
import { ReconcileDeps, recordTransitions, requeue, writeStatus } from './reconcile-context';
import { Condition, ConditionInput } from './runtime/conditions';
import { removeFinalizer } from './runtime/finalizer';
import { describeFailures, failureReason, lookupMetadata } from './runtime/apply';
import { KubeObject } from '../kube/rest';
import type { SecondaryWatch } from './runtime/controller';
import type { LLMModelV1beta1, PassthroughModelV1beta1 } from '../api/v1beta1';

export type ModelObject = (LLMModelV1beta1 | PassthroughModelV1beta1) & KubeObject;

export function modelRef(model: ModelObject): ModelRef {
  return { kind: model.kind, name: model.metadata.name, namespace: model.metadata.namespace! };
}

const endpointConditionType: Record<EndpointName, string> = { external: 'ExternalEndpointReady', internal: 'InternalEndpointReady' };

/** The finalizer's work. Returns a delay while the generated HTTPRoutes are still going away. */
export async function finalizeModel(deps: ReconcileDeps, model: ModelObject, keyObjects?: KeyObjectCache): Promise<number | undefined> {
  const { waiting } = await runDeletions(deps.client, gatewayTeardown(model), model.metadata.uid);
  if (waiting) {
    deps.log.info('waiting for a generated object to go before deleting the rest', { waitingFor: `${waiting.object.kind}/${waiting.object.name}` });
    const wait = await reportIfBlocked(deps, model, waiting.object);
    // The auth policy lives until the wait ends, which may be never: keys still expire meanwhile.
    const keysWait = await revokeDueKeysUnpublished(deps, model, keyObjects);
    return keysWait === undefined ? wait : Math.min(wait, keysWait);
  }
  const keys = await deleteApiKeyObjects(deps.client, modelRef(model), model.apiVersion);
  if (keys === 'kept-shared') deps.log.warn('API keys kept: a model of the other kind has the same name', {});
  if (keys === 'not-ours') deps.log.warn('key objects of this name are not the model\'s; left in place', {});
  deps.keyInfo?.delete(modelRef(model));
  await removeFinalizer(deps.client, model);
  deps.log.info('cleanup finished; finalizer removed', {});
  return undefined;
}

/**
 * Expiry and access revocation for a model that is not being published (its deletion waits, or the
 * operator is not configured): the keys go from its key objects, as in publishModel, without
 * creating anything. Returns when to look again (the next expiry), if ever.
 */
export async function revokeDueKeysUnpublished(deps: ReconcileDeps, model: ModelObject, keyObjects?: KeyObjectCache): Promise<number | undefined> {
  const objects = await readApiKeyObjects(deps.client, modelRef(model), keyObjects);
  if (!objects) return undefined;
  return (await revokeDueKeys(deps, model, modelRef(model), objects.clientIds, objects.metadataData)).requeueAfterMs;
}

/**
 * Once the model has been deleting longer than the bound, says what holds its cleanup
 * (CleanupBlocked, with a Warning Event on the transition) and keeps waiting, more slowly.
 * Never removes a finalizer: see cleanup-blocked.ts.
 */
async function reportIfBlocked(deps: ReconcileDeps, model: KubeObject, awaited: ObjectReference): Promise<number> {
  const boundMs = deps.cleanupBlockedAfterMs ?? DEFAULT_CLEANUP_BLOCKED_AFTER_MS;
  const deletingSince = Date.parse(model.metadata.deletionTimestamp ?? '') || Date.now();
  if (Date.now() - deletingSince < boundMs) return requeue.deletionWait;
  const wait = await inspectBlockedWait(deps.client, awaited);
  if (!wait) return requeue.deletionWait; // gone meanwhile: the next pass goes on
  const condition = cleanupBlockedCondition(wait, Math.round(boundMs / 1000));
  const changed = await writeStatus(deps.client, model, { phase: 'Error', conditions: [condition] });
  if (changed.length > 0) deps.log.warn('deletion blocked', { waitingFor: `${awaited.kind}/${awaited.name}`, reason: condition.reason });
  await recordTransitions(deps.events, model, changed);
  return requeue.cleanupBlocked;
}

export interface PublishOutcome {
  conditions: ConditionInput[];
  /** Every enabled endpoint applied and no problem found. */
  ok: boolean;
  /** The translation failed (a spec problem the user must fix). */
  buildFailed: boolean;
  /** Gateway CRDs are missing. */
  crdMissing: boolean;
  requeueAfterMs?: number;
  /** Endpoint URLs for status. */
  endpoints: { external?: string; internal?: string };
  /** A one-line summary for the backend condition. */
  summary: { reason: string; message: string };
}

/** The controller's watches a model's publication reads (without them, the server is asked and Programmed is left out). */
export interface PublishWatches {
  /** The models on the external endpoint, whose key Secrets every external policy accepts. */
  peers?: ExternalEndpointPeers;
  /** Generated HTTPRoutes and proxy Deployments, for the Programmed condition. */
  proxyStatus?: ProxyStatus;
  /** The model's key Secret and metadata ConfigMap (without it, both are applied and read on every pass). */
  keyObjects?: KeyObjectCache;
}

/**
 * Ensures the key objects exist, removes the keys that expired or lost access (requeueing at the
 * next expiry), and publishes the model through the gateway with the remaining keys; its external
 * policy also accepts the keys of every model on the endpoint when its route is one of the
 * endpoint's oldest (`peers`, the controller's watches). Then
 * says whether a request would reach it now (Programmed).
 */
export async function publishModel(deps: ReconcileDeps, model: ModelObject, extra: Partial<GatewayContext> = {}, watches: PublishWatches = {}): Promise<PublishOutcome> {
  const { peers, proxyStatus } = watches;
  let keyObjects: KeyObjectsRead;
  try {
    keyObjects = await ensureApiKeyObjects(deps.client, modelRef(model), watches.keyObjects);
  } catch (err) {
    if (err instanceof KeyObjectConflict) return keyObjectConflict(model, err.message);
    throw err;
  }
  // The portal may read and patch only Secrets its Role names: name this one before the model can be Ready.
  await deps.portalSecrets?.readable(keyObjects.secretName);
  const keys = await revokeDueKeys(deps, model, modelRef(model), keyObjects.clientIds, keyObjects.metadataData);
  deps.keyInfo?.set(modelRef(model), keyObjects.clientIds, keyObjects.metadataData, keys.revoked);
  // The other models' key Secrets its external policy accepts (without a watch, every model's, listed from the server).
  const externalEndpointKeySecrets = enabledEndpoints(model.spec.endpoints).includes('external')
    ? await (peers ?? new ExternalEndpointPeers(model.kind)).keySecrets(deps.client, model)
    : [];
  const outcome = await publishTranslation(deps, model, {
    ...extra,
    apiKeysSecretName: keyObjects.secretName,
    externalEndpointKeySecrets,
    apiKeyClientIDs: keyObjects.clientIds.filter((id) => !keys.revoked.has(id)),
    // Each key's quota tier, from its metadata record (read only while quotas are on).
    ...(deps.gateway.quotas ? { apiKeyTiers: keyTiersFromMetadata(keyObjects.metadataData) } : {}),
  });
  const idConflict = await modelIdCondition(deps, model, peers ?? new ExternalEndpointPeers(model.kind));
  if (idConflict) outcome.conditions.push(idConflict);
  const programmed = proxyStatus ? await programmedOutcome(proxyStatus, model, outcome) : undefined;
  if (programmed) outcome.conditions.push(programmed.condition);
  const waits = [outcome.requeueAfterMs, keys.requeueAfterMs, programmed?.requeueAfterMs].filter((n): n is number => n !== undefined);
  return waits.length ? { ...outcome, requeueAfterMs: Math.min(...waits) } : outcome;
}

async function programmedOutcome(proxyStatus: ProxyStatus, model: ModelObject, published: PublishOutcome): Promise<{ condition: ConditionInput; requeueAfterMs?: number }> {
  if (!proxyStatus.enabled) {
    return { condition: { type: PROGRAMMED_CONDITION, status: 'Unknown', reason: 'ProxyStatusOff', message: 'the operator does not watch the gateway proxies (chart value platform.proxyStatus is false)' } };
  }
  if (!published.ok) {
    return { condition: { type: PROGRAMMED_CONDITION, status: false, reason: 'NotApplied', message: `the model's gateway objects are not applied: ${published.summary.message}` } };
  }
  const enabled = enabledEndpoints(model.spec.endpoints);
  const previous = ((model.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === PROGRAMMED_CONDITION);
  return proxyStatus.programmed(model.metadata.name, model.metadata.namespace!, enabled, previous);
}

export const MODEL_ID_CONFLICT_CONDITION = 'ModelIdConflict';

/**
 * `ModelIdConflict=True` (reason `DuplicateModelId`) while another model of the namespace serves
 * one of this model's ids on the same endpoint: pairs stored before the webhook refused them. The
 * gateway sends the id to whichever route is oldest, so this is said rather than left silent.
 * Set to False once resolved; models that never had a conflict get no such condition.
 */
async function modelIdCondition(deps: ReconcileDeps, model: ModelObject, peers: ExternalEndpointPeers): Promise<ConditionInput | undefined> {
  const conflicts = await peers.modelIdConflicts(deps.client, model);
  if (conflicts.length > 0) {
    const which = conflicts.map((c) => `"${c.id}" on the ${c.endpoint} endpoint is also served by ${c.other}`).join('; ');
    return {
      type: MODEL_ID_CONFLICT_CONDITION,
      status: true,
      reason: 'DuplicateModelId',
      message: `${which}; requests for such an id go to whichever model's route is oldest, and re-creating either model moves them. Remove the id from one of the models`,
    };
  }
  const had = ((model.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === MODEL_ID_CONFLICT_CONDITION && c.status === 'True');
  return had ? { type: MODEL_ID_CONFLICT_CONDITION, status: false, reason: 'Resolved', message: 'no other model serves its model ids' } : undefined;
}

/** Nothing is published while a key object's name is taken by someone else's object. */
function keyObjectConflict(model: ModelObject, message: string): PublishOutcome {
  const enabled = enabledEndpoints(model.spec.endpoints);
  return {
    conditions: (['external', 'internal'] as const).map((e) => ({ type: endpointConditionType[e], status: false, reason: enabled.includes(e) ? 'Conflict' : 'EndpointDisabled', message: enabled.includes(e) ? message : `the ${e} endpoint is disabled` })),
    ok: false,
    buildFailed: false,
    crdMissing: false,
    requeueAfterMs: requeue.conflict,
    endpoints: {},
    summary: { reason: 'Conflict', message },
  };
}

async function publishTranslation(deps: ReconcileDeps, model: ModelObject, keys: Partial<GatewayContext>): Promise<PublishOutcome> {
  const translation = desiredGatewayObjects(model, { ...deps.gateway, ...keys });
  const enabled = enabledEndpoints(model.spec.endpoints);
  const endpointCondition = (name: EndpointName, status: boolean, reason: string, message: string): ConditionInput => ({ type: endpointConditionType[name], status, reason, message });
  const all: EndpointName[] = ['external', 'internal'];

  if (translation.errors.length > 0) {
    const message = describeErrors(translation.errors);
    return {
      conditions: all.map((e) => endpointCondition(e, false, enabled.includes(e) ? 'BuildFailed' : 'EndpointDisabled', enabled.includes(e) ? message : `the ${e} endpoint is disabled`)),
      ok: false,
      buildFailed: true,
      crdMissing: false,
      endpoints: {},
      summary: { reason: 'BuildFailed', message },
    };
  }

  const sync = await syncGatewayObjects(deps.client, translation.objects, translation.deletions, model.metadata.uid);
  if (sync.missingKinds.length > 0) {
    const message = `the API server does not serve ${sync.missingKinds.join(', ')}; install Envoy AI Gateway 1.1, Envoy Gateway 1.8 and Gateway API 1.5 CRDs (the model converges once they exist)`;
    return {
      conditions: all.map((e) => endpointCondition(e, false, enabled.includes(e) ? 'GatewayCRDUnavailable' : 'EndpointDisabled', enabled.includes(e) ? message : `the ${e} endpoint is disabled`)),
      ok: false,
      buildFailed: false,
      crdMissing: true,
      requeueAfterMs: requeue.crdMissing,
      endpoints: {},
      summary: { reason: 'GatewayCRDUnavailable', message },
    };
  }

  const conditions: ConditionInput[] = [];
  const endpoints: PublishOutcome['endpoints'] = {};
  for (const e of all) {
    if (!enabled.includes(e)) {
      const removing = sync.waiting?.object.name.endsWith(`-${e}`) === true;
      conditions.push(endpointCondition(e, false, 'EndpointDisabled', removing ? `the ${e} endpoint is disabled; its auth policy is removed once the generated HTTPRoute is gone` : `the ${e} endpoint is disabled`));
      continue;
    }
    const failures = sync.failed.filter((f) => f.name.endsWith(`-${e}`) || f.name.endsWith(`-${e}-auth`));
    if (failures.length > 0) {
      conditions.push(endpointCondition(e, false, failureReason(failures), describeFailures(failures)));
    } else if (sync.failed.length > 0) {
      conditions.push(endpointCondition(e, false, 'ApplyFailed', 'a backend object of this model failed to apply; see the BackendConfigured condition'));
    } else {
      const host = deps.gateway[e]?.hostname ?? `${e === 'external' ? 'llm' : 'llm-internal'}.${deps.gateway.baseDomain}`;
      endpoints[e] = `https://${host.toLowerCase().replace(/\.$/, '')}/v1`;
      conditions.push(endpointCondition(e, true, 'Applied', `routes and auth policy applied; served at ${endpoints[e]}`));
    }
  }
  const ok = sync.failed.length === 0;
  return {
    conditions,
    ok,
    buildFailed: false,
    crdMissing: false,
    requeueAfterMs: sync.waiting ? requeue.deletionWait : ok ? undefined : failureReason(sync.failed) === 'Conflict' ? requeue.conflict : requeue.applyFailed,
    endpoints,
    summary: ok
      ? { reason: 'Applied', message: `${sync.applied.length} gateway objects applied` }
      : { reason: failureReason(sync.failed), message: describeFailures(sync.failed) },
  };
}

/**
 * Watches on the gateway objects generated for `modelKind`, every object of those kinds in the
 * namespace (not only ours): the cache then also answers "does an object of this name exist?",
 * so the adoption check needs no GET. Deleting one of ours out of band (or by another tool)
 * re-reconciles its model at once, instead of at the next resync. Other events are our own
 * writes and need no reaction.
 */
export function generatedObjectWatches(modelKind: 'LLMModel' | 'PassthroughModel', kinds: ReadonlyArray<{ apiVersion: string; kind: string }>): SecondaryWatch[] {
  return kinds.map(({ apiVersion, kind }) => ({
    apiVersion,
    kind,
    transform: lookupMetadata,
    keepManagedFields: true,
    map: (obj: KubeObject, event: string) => {
      return event === 'delete' ? controllerOwnerKey(obj, modelKind) : [];
    },
  }));
}
