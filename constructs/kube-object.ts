// Typed API objects. Every object the constructs render is written against a cdk8s L1 class, so its
// fields are checked at compile time: cdk8s-plus-28's `k8s` classes for built-in kinds, the
// imports/ classes (`cdk8s import` of the upstream CRDs, see cdk8s.yaml) for the others.
//
// The object itself is a plain ApiObject made of the class's GVK and the typed props, not an
// instance of the class: an L1 class's toJson rebuilds the object from its schema's fields only,
// which would drop the keys the Helm rendering adds for conditional fields (RenderContext.when,
// .block, .whenItem). The output is therefore exactly the props as written.
import { ApiObject, GroupVersionKind } from 'cdk8s';
import { Construct } from 'constructs';

/** An L1 class: a GVK and a constructor. */
type ApiObjectClass = { readonly GVK: GroupVersionKind } & (new (scope: Construct, id: string, props: never) => ApiObject);

/** An L1 class's props: its constructor's third parameter (optional in cdk8s-plus-28's classes). */
type PropsOf<C extends ApiObjectClass> = NonNullable<ConstructorParameters<C>[2]>;

/** The object of kind `type` (an L1 class) with these props, rendered as written. */
export function kubeObject<C extends ApiObjectClass>(type: C, scope: Construct, id: string, props: PropsOf<C>): ApiObject {
  return new ApiObject(scope, id, { ...type.GVK, ...jsonFields(props) });
}

function jsonFields(o: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, jsonValue(v)]));
}

/**
 * IntOrString, Quantity and the imports' number-or-string classes (built with `fromString` /
 * `fromNumber`) hold their JSON value in `value`, which an L1 class's toJson unwraps; so does this.
 */
function jsonValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(jsonValue);
  if (v === null || typeof v !== 'object') return v;
  if ('value' in v && 'fromString' in v.constructor) return v.value;
  return jsonFields(v);
}
