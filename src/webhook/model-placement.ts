// Where LLMModel and PassthroughModel objects may live, a rule both kinds share. Envoy Gateway's
// API-key auth cannot reference Secrets in another namespace and every model's key Secret is
// pooled in one SecurityPolicy, so models live in the operator's own namespace, and the two kinds
// may not share a name because both derive the same `<name>-api-keys` Secret. The operator
// namespace needs no label: it is the one namespace admitted, and `helm --create-namespace`
// (the usual way to make it) cannot label it.
import { apiKeysSecretName, sharedGeneratedNames } from '../translate/gateway/names';
import { type ServingModel, duplicateModelIds, modelIdsField, servedModelIds } from '../translate/gateway/served-ids';
import type { AdmissionContext } from './admission';
import type { ClusterLookups, ModelKind, ModelsWanted } from './lookups';
import { jsonEqual } from './json-patch';
import type { AdmissionRequest } from './review';
import { checkRoutingTargetsBinding, routingTargetFindings } from './routing';
import type { PassthroughRouting } from '../api/routing';
import { type SecretReference, checkSecretAccess } from './secret-access';
import { Findings, lookupFailed, type Verdict } from './verdict';

export interface ModelPlacement {
  readonly kind: ModelKind;
  /** The other model kind, whose names this one may not reuse. */
  readonly otherKind: ModelKind;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly operatorNamespace: string;
}

/** Checks namespace and name of a model being created; findings are added to `findings`. */
export async function checkModelPlacement(placement: ModelPlacement, lookups: ClusterLookups, findings: Findings): Promise<void> {
  const { kind, otherKind, namespace, name, operatorNamespace } = placement;
  if (!namespace) {
    findings.deny(`metadata.namespace: a ${kind} is namespaced; create it in the namespace "${operatorNamespace}"`);
    return;
  }
  if (namespace !== operatorNamespace) {
    findings.deny(
      `metadata.namespace: "${namespace}" is not the operator namespace; create the ${kind} in "${operatorNamespace}" ` +
        '(gateway API-key auth cannot read key Secrets from other namespaces)',
    );
    return;
  }
  if (!name) return;
  let collision;
  try {
    collision = await lookups.getModel(otherKind, namespace, name);
  } catch (error) {
    findings.deny(lookupFailed(`whether a ${otherKind} named "${name}" exists`, error), 503);
    return;
  }
  if (collision !== undefined) {
    findings.deny(
      `metadata.name: ${otherKind === 'LLMModel' ? 'an' : 'a'} ${otherKind} named "${name}" already exists in "${namespace}" and both would use the API-key ` +
        `Secret "${apiKeysSecretName(name)}"; choose another name`,
    );
  }
}

/**
 * The two checks below list the namespace's models. When that list fails (a slow or busy API
 * server, conversion during an upgrade) the model is admitted with a warning rather than refused:
 * a write during our own upgrade must not fail, and the operator's conditions are the backstop.
 */
function uncheckedWarning(what: string, error: unknown, backstop: string): string {
  const detail = error instanceof Error ? error.message : String(error);
  return `could not check ${what} (${detail}); admitted unchecked: ${backstop}`;
}

/** Every model of both kinds in the namespace. */
async function modelsIn(namespace: string, lookups: ClusterLookups): Promise<ServingModel[]> {
  return (await Promise.all((['LLMModel', 'PassthroughModel'] as const).map((kind) => lookups.listModels(kind, namespace)))).flat() as ServingModel[];
}

/**
 * Refuses a new model whose generated objects would have the name of another model's (its short
 * name equals a long name's cut form, or two long names' hashes collide): the operator would
 * report a Conflict at best, so the name is refused before anything is stored. `models`: the
 * namespace's models, or at least those generating one of its names (ClusterLookups.modelsSharing).
 */
export async function checkGeneratedNames(kind: ModelKind, name: string, namespace: string, models: () => Promise<ServingModel[]>, findings: Findings): Promise<void> {
  let others: ServingModel[];
  try {
    others = await models();
  } catch (error) {
    findings.warn(uncheckedWarning(`which names the models in "${namespace}" generate`, error, 'the operator reports a Conflict on the endpoint conditions if another model owns them'));
    return;
  }
  for (const other of others) {
    const shared = other.metadata?.name ? sharedGeneratedNames(name, other.metadata.name) : [];
    if (shared.length > 0) {
      findings.deny(`metadata.name: the ${kind} "${name}" would generate objects named like those of ${other.kind} ${other.metadata?.name} in "${namespace}" (${shared.join(', ')}); choose another name`);
    }
  }
}

/**
 * Refuses a model that would declare a model id another model of the namespace already serves on
 * the same endpoint: the gateway would send the id's requests to whichever route is oldest, and
 * re-creating either model would move them silently. `models`: the namespace's models, or at
 * least those serving one of its ids.
 */
export async function checkModelIds(model: ServingModel, namespace: string, models: () => Promise<ServingModel[]>, findings: Findings): Promise<void> {
  if (servedModelIds(model).length === 0) return;
  let others: ServingModel[];
  try {
    others = await models();
  } catch (error) {
    findings.warn(uncheckedWarning(`which model ids the models in "${namespace}" serve`, error, 'the operator reports ModelIdConflict on both models if one of its ids is taken'));
    return;
  }
  const field = modelIdsField(model.kind);
  for (const d of duplicateModelIds(model, others)) {
    findings.deny(
      `${field}: model id "${d.id}" is already served on the ${d.endpoint} endpoint by ${d.other} in "${namespace}"; ` +
        `two models with one id would take turns getting its requests as they are re-created. Choose another id, or remove "${d.id}" from ${d.other} first`,
    );
  }
}

/** The fallback and split models of a PassthroughModel, against the namespace's models (routing.ts). */
async function checkRoutingTargets(model: ServingModel, namespace: string, models: () => Promise<ServingModel[]>, findings: Findings): Promise<void> {
  let others: ServingModel[];
  try {
    others = await models();
  } catch (error) {
    findings.warn(uncheckedWarning(`the fallback and split models in "${namespace}"`, error, 'a missing model makes the route fail; its Programmed condition says so'));
    return;
  }
  routingTargetFindings({ ...model, kind: 'PassthroughModel' }, namespace, others, findings);
}

/** What a model kind hands the confused-deputy guard: the Secrets it names and where they are sent. */
export interface ModelSecretUse<T> {
  readonly secrets: (model: T) => SecretReference[];
  /** Where the Secrets' contents go (a provider host); a change re-checks the Secrets. */
  readonly destination?: (model: T) => unknown;
}

/**
 * The validation both model kinds share: placement on CREATE (fixed at creation; re-checking it on
 * UPDATE would only block repairs), the Secret guard on CREATE and on any UPDATE that changes a
 * Secret reference or the destination (so the operator's own finalizer and status writes never
 * need it), then the kind's own field rules.
 */
export async function validateModel<T extends { metadata?: { name?: string; namespace?: string } }>(
  request: AdmissionRequest<T>,
  context: AdmissionContext,
  kinds: { kind: ModelKind; otherKind: ModelKind },
  fieldFindings: (model: T, findings: Findings) => void,
  secretUse: ModelSecretUse<T>,
): Promise<Verdict> {
  const model = request.object as T;
  const findings = new Findings();
  const namespace = model.metadata?.namespace ?? request.namespace;
  // Listed at most once per request, for the checks that need every model of the namespace.
  let listed: Promise<ServingModel[]> | undefined;
  const models = () => (listed ??= modelsIn(namespace!, context.lookups));
  // The id and name checks need only the models that could clash, when an index can say which.
  const sharing = (wanted: ModelsWanted) => () =>
    context.lookups.modelsSharing ? (context.lookups.modelsSharing(namespace!, wanted) as Promise<ServingModel[]>) : models();
  if (request.operation === 'CREATE') {
    const placement = { ...kinds, namespace, name: model.metadata?.name ?? request.name, operatorNamespace: context.operatorNamespace };
    await checkModelPlacement(placement, context.lookups, findings);
    if (namespace && placement.name) await checkGeneratedNames(kinds.kind, placement.name, namespace, sharing({ generatedNamesOf: placement.name }), findings);
  }
  const old = request.oldObject as T | undefined;
  const secrets = secretUse.secrets(model);
  const changed = (of: (m: T) => unknown) => !old || !jsonEqual(of(old), of(model));
  if (secrets.length > 0 && namespace && (changed(secretUse.secrets) || (secretUse.destination && changed(secretUse.destination)))) {
    await checkSecretAccess(secrets, { user: request.userInfo, namespace, kind: 'model' }, context.lookups, findings);
  }
  // Ids are checked when they are declared: on CREATE and when an UPDATE changes them or the endpoints.
  const served = (m: T) => servedModelIds({ ...(m as ServingModel), kind: kinds.kind });
  if (namespace && changed(served)) await checkModelIds({ ...(model as ServingModel), kind: kinds.kind }, namespace, sharing({ ids: served(model) }), findings);
  // Fallback and split models are checked when the routing changes (they may be deleted later: docs/routing.md).
  const routing = (m: T) => (m as { spec?: { routing?: unknown } }).spec?.routing;
  if (namespace && kinds.kind === 'PassthroughModel' && routing(model) !== undefined && changed(routing)) {
    await checkRoutingTargets(model as ServingModel, namespace, models, findings);
    await checkRoutingTargetsBinding(routing(model) as PassthroughRouting, old && (routing(old) as PassthroughRouting | undefined), { user: request.userInfo, namespace }, context.lookups, findings);
  }
  fieldFindings(model, findings);
  return findings.verdict();
}
