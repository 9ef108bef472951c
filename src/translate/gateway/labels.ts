// Metadata every generated gateway object carries: the standard app.kubernetes.io labels, our
// own labels that say which model and endpoint an object belongs to (the operator lists and
// cleans up by them), and the controller owner reference to the model. No
// `app.kubernetes.io/instance`: the chart uses it for the Helm release, which these objects are
// not part of (the operator or a static render creates them, per model).
import { boundedName, EndpointName } from './names';
import type { ObjectMetadata, OwnerReference } from './objects';

export const APP_NAME = 'nebari-llm-serving';
/** Which model an object was generated for (the model name, shortened to 63 characters if needed). */
export const LABEL_MODEL = 'llm.nebari.dev/model';
/** `LLMModel` or `PassthroughModel`. */
export const LABEL_MODEL_KIND = 'llm.nebari.dev/model-kind';
/** `external` or `internal`, on routes and security policies. */
export const LABEL_ENDPOINT = 'llm.nebari.dev/endpoint';

/** The identity of a model: enough to name, label and own its objects. */
export interface ModelIdentity {
  readonly apiVersion: string;
  readonly kind: 'LLMModel' | 'PassthroughModel';
  readonly metadata: { readonly name?: string; readonly namespace?: string; readonly uid?: string };
}

/** Labels of an object generated for `model`, in sorted key order. */
export function gatewayLabels(model: ModelIdentity, endpoint?: EndpointName): Record<string, string> {
  // Same value as gatewayObjectNames(name).modelLabel, computed alone (this runs per object).
  const modelLabel = boundedName(model.metadata.name ?? '');
  // Written in sorted key order, so no sorting is needed.
  return {
    'app.kubernetes.io/component': 'gateway',
    'app.kubernetes.io/managed-by': APP_NAME,
    'app.kubernetes.io/name': APP_NAME,
    'app.kubernetes.io/part-of': APP_NAME,
    ...(endpoint ? { [LABEL_ENDPOINT]: endpoint } : {}),
    [LABEL_MODEL]: modelLabel,
    [LABEL_MODEL_KIND]: model.kind,
  };
}

/**
 * The controller reference to the model, so deleting the model deletes its gateway objects.
 * A model without a uid (a static manifest rendered by `npm run synth` before it exists in a
 * cluster) gets none; the operator's first apply adds it.
 */
export function modelOwnerReferences(model: ModelIdentity): OwnerReference[] | undefined {
  const { name, uid } = model.metadata;
  if (!uid || !name) return undefined;
  return [{ apiVersion: model.apiVersion, kind: model.kind, name, uid, controller: true, blockOwnerDeletion: true }];
}

/** Metadata of a generated object: name, the model's namespace, labels, owner reference. */
export function gatewayMetadata(model: ModelIdentity, name: string, endpoint?: EndpointName): ObjectMetadata {
  const ownerReferences = modelOwnerReferences(model);
  return {
    name,
    namespace: model.metadata.namespace ?? '',
    labels: gatewayLabels(model, endpoint),
    ...(ownerReferences ? { ownerReferences } : {}),
  };
}

/** A copy of `record` with its keys in sorted order (stable output for byte-identical renders). */
export function sortedRecord<T>(record: Record<string, T>): Record<string, T> {
  const sorted: Record<string, T> = {};
  for (const key of Object.keys(record).sort()) sorted[key] = record[key];
  return sorted;
}
