// Building blocks shared by the three kinds: API group constants, Kubernetes-shaped pieces
// (metadata, conditions, quantities, resource requirements) and the access/endpoint blocks that
// LLMModel and PassthroughModel share. Every helper returns a schema that is already structural
// (`type` set, no `anyOf`/`const`), so the CRD builder only has to check, not rewrite.
import { Type } from '@sinclair/typebox';
import type { SchemaOptions, Static, TProperties, TUnsafe } from '@sinclair/typebox';

/** The API group of every kind in this project. */
export const API_GROUP = 'llm.nebari.dev';
/** The first served version; v1alpha1 clients keep working through the conversion webhook (docs/api-versions.md). */
export const API_VERSION = 'v1alpha1';
/** The second served version; objects convert between the two through the conversion webhook (docs/api-versions.md). */
export const API_VERSION_V1BETA1 = 'v1beta1';
/** Every served version, oldest first (the order of `spec.versions` in the CRDs). */
export const API_VERSIONS = [API_VERSION, API_VERSION_V1BETA1] as const;
export type ApiVersionName = (typeof API_VERSIONS)[number];
/** `apiVersion` of a v1alpha1 object: `llm.nebari.dev/v1alpha1`. */
export const API_GROUP_VERSION = `${API_GROUP}/${API_VERSION}` as const;
/** `apiVersion` of a v1beta1 object, the version the operator, the webhooks and offline admission work in. */
export const API_GROUP_VERSION_V1BETA1 = `${API_GROUP}/${API_VERSION_V1BETA1}` as const;
/** The operator's finalizer on every model and agent: their generated objects and keys go first. */
export const CLEANUP_FINALIZER = 'llm.nebari.dev/cleanup';
/** `kubectl get nebari` lists every kind of this project. */
export const API_CATEGORY = 'nebari';

/** One CEL rule as the API server reads it from `x-kubernetes-validations`. */
export interface CelRule {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly fieldPath?: string;
  /** The rule also runs on create, with `oldSelf` an optional (`oldSelf.hasValue()` is false then). */
  readonly optionalOldSelf?: boolean;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** Attaches CEL rules to a schema (TypeBox passes unknown options through verbatim). */
export function cel(...rules: CelRule[]): { 'x-kubernetes-validations': CelRule[] } {
  return { 'x-kubernetes-validations': rules };
}

/** `text` as the body of a CEL single-quoted string literal. */
export function celString(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}

/**
 * A rule on a string field whose message quotes the offending value: `<field>: "<value>" <problem>`.
 * The plain `message` is the fallback the API server uses when the value would break the message
 * (line breaks are not allowed in messages).
 */
export function valueRule(rule: string, field: string, problem: string): CelRule {
  return {
    rule,
    message: `${field} ${problem}`,
    messageExpression: `'${celString(field)}: "' + self + '" ${celString(problem)}'`,
  };
}

/** A string restricted to `values`, typed as their union (an `enum`, not TypeBox's `anyOf` of consts). */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

/** A map of string to string (labels, node selectors), bounded so CEL cost stays estimable. */
export function StringMap(options: SchemaOptions & { maxProperties: number }): TUnsafe<Record<string, string>> {
  return Type.Unsafe<Record<string, string>>({ ...options, type: 'object', additionalProperties: { type: 'string' } });
}

/** A free-form object kept verbatim (no pruning), e.g. framework config or provider overrides. */
export function FreeFormObject(options: SchemaOptions): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({ ...options, type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
}

/** The regular expression of a Kubernetes resource.Quantity string (as the API server's own schema). */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/** A resource.Quantity: an integer or a string such as `200Gi` or `500m`. */
export function Quantity(options: SchemaOptions = {}): TUnsafe<string | number> {
  return Type.Unsafe<string | number>({
    ...options,
    'x-kubernetes-int-or-string': true,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    pattern: QUANTITY_PATTERN,
  });
}

/** A zero quantity: zeros (with an optional point and sign) before an optional suffix. */
const ZERO_QUANTITY = '^[+]?(0+[.]?0*|[.]0+)([^0-9.].*)?$';

/**
 * CEL: `value` (a quantity string) is above zero. A negative or zero size is refused here rather
 * than later by the PVC. Used on string fields only: on an int-or-string, Kubernetes before 1.34
 * estimates the value at the whole request's size, and the rule's cost exceeds the budget.
 */
export function positiveQuantity(value: string): string {
  return `!${value}.startsWith('-') && !${value}.matches('${ZERO_QUANTITY}')`;
}

/**
 * A map of resource name to quantity (`requests`, `limits`). The admission webhook refuses a
 * quantity that is not above zero (`resourceListProblems`): as a CEL rule on these
 * int-or-string values the check costs more than Kubernetes 1.32 and 1.33 allow, and the CRD
 * must be accepted by every minor the chart claims.
 */
export function ResourceList(description: string): TUnsafe<Record<string, string | number>> {
  return Type.Unsafe<Record<string, string | number>>({
    description,
    type: 'object',
    maxProperties: 16,
    additionalProperties: {
      'x-kubernetes-int-or-string': true,
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      pattern: QUANTITY_PATTERN,
      maxLength: 64,
    },
  });
}

const zeroQuantity = new RegExp(ZERO_QUANTITY);

/**
 * The webhooks' check of a container's resources at `field` (LLMModel and AgentDeployment): every
 * quantity of its requests and limits above zero, each refusal naming the entry
 * (`spec.resources.limits[memory]`). On UPDATE an entry equal to the old object's is not checked
 * again, as the API server ratchets a CRD rule, so an object stored before the check can still
 * take its finalizer and status writes.
 */
export function resourceListProblems(resources: ResourceRequirements | undefined, field: string, old?: ResourceRequirements): string[] {
  return (['requests', 'limits'] as const).flatMap((list) =>
    Object.entries(resources?.[list] ?? {})
      .filter(([name, quantity]) => old?.[list]?.[name] !== quantity)
      .filter(([, quantity]) => String(quantity).startsWith('-') || zeroQuantity.test(String(quantity)))
      .map(
        ([name, quantity]) =>
          `${field}.${list}[${name}]: ${JSON.stringify(quantity)} is not above zero; every quantity must be above zero, such as 500m for cpu or 1Gi for memory; set a positive value or remove the entry`,
      ),
  );
}

type ResourceRequirements = Static<typeof ResourceRequirementsSchema>;

/**
 * Rules of a model id: clients send it in a request header (and the routes match it exactly), which
 * cannot carry control characters, and surrounding whitespace would make an id no client sends.
 */
export function modelIdRules(field: string): CelRule[] {
  return [
    {
      rule: "!self.matches('[\\\\x00-\\\\x1f\\\\x7f]')",
      message: `${field}: the model id contains a control character (such as a line break or a tab), which no request header can carry; remove it`,
    },
    valueRule("!self.matches('^\\\\s|\\\\s$')", field, 'has leading or trailing whitespace, so no request would match the model id; remove the whitespace'),
  ];
}

/**
 * Rules of a group name: it is matched exactly against the groups claim of a caller's token, so
 * an empty name, a control character or surrounding whitespace would admit a model nobody can call.
 */
export function groupNameRules(field: string): CelRule[] {
  return [
    {
      rule: "!self.matches('[\\\\x00-\\\\x1f\\\\x7f]')",
      message: `${field}: the group name contains a control character (such as a line break or a tab), which no token's groups claim carries; remove it`,
    },
    valueRule("!self.matches('^\\\\s|\\\\s$')", field, 'has leading or trailing whitespace, so no caller\'s groups claim would match it; remove the whitespace'),
  ];
}

/** Container resource requests and limits (the shape of core/v1 ResourceRequirements, minus claims). */
export const ResourceRequirementsSchema = Type.Object(
  {
    requests: Type.Optional(
      ResourceList('requests is the amount of compute resources the container is guaranteed (for example cpu: 500m, memory: 1Gi).'),
    ),
    limits: Type.Optional(ResourceList('limits is the maximum amount of compute resources the container may use.')),
  },
  { description: 'Compute resources for the container, as in a Pod container spec.' },
);

/** The subset of object metadata this project reads and writes (JSON as the API server returns it). */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  generateName?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Array<{
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }>;
  managedFields?: unknown[];
}

/** `metadata` in a CRD schema: the API server validates it itself, so only the type is given. */
export const ObjectMetaSchema = Type.Unsafe<ObjectMeta>({ type: 'object', description: 'Standard object metadata.' });

/** `apiVersion` in a CRD schema of `version`. */
export function apiVersionSchema<V extends ApiVersionName>(version: V): TUnsafe<`${typeof API_GROUP}/${V}`> {
  return Type.Unsafe<`${typeof API_GROUP}/${V}`>({ type: 'string', description: `APIVersion of this object: ${API_GROUP}/${version}.` });
}

/** `apiVersion` in the v1alpha1 CRD schema. */
export const ApiVersionSchema = apiVersionSchema(API_VERSION);

/** `kind` in a CRD schema, typed as the literal kind. */
export function KindSchema<K extends string>(kind: K): TUnsafe<K> {
  return Type.Unsafe<K>({ type: 'string', description: `Kind of this object: ${kind}.` });
}

/** Condition status values, as in metav1.Condition. */
export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

/** One status condition, the standard metav1.Condition shape. */
export const ConditionSchema = Type.Object(
  {
    type: Type.String({
      description: 'type of the condition in CamelCase, for example Ready.',
      maxLength: 316,
      pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    }),
    status: StringEnum(CONDITION_STATUSES, { description: 'status of the condition: True, False or Unknown.' }),
    observedGeneration: Type.Optional(
      Type.Integer({ description: 'observedGeneration is the metadata.generation the condition was computed from.', format: 'int64', minimum: 0 }),
    ),
    lastTransitionTime: Type.String({ description: 'lastTransitionTime is when the status last changed.', format: 'date-time' }),
    reason: Type.String({
      description: 'reason is a CamelCase identifier for the last transition.',
      maxLength: 1024,
      minLength: 1,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    }),
    message: Type.String({ description: 'message explains the transition in words; may be empty.', maxLength: 32768 }),
  },
  { description: 'One aspect of the observed state (metav1.Condition).' },
);

export type Condition = Static<typeof ConditionSchema>;

/** A list response (`kubectl get <plural> -o json`). */
export interface KubeList<T> {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** `status.conditions`: a list map keyed by type, so each condition type appears at most once. */
export const ConditionsSchema = Type.Array(ConditionSchema, {
  description: 'conditions are the latest observations of the object, one per type.',
  maxItems: 32,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
});

/** The condition every kind reports as its aggregate readiness (printed in the Ready column). */
export const CONDITION_READY = 'Ready';

/** `status.observedGeneration`. */
export const ObservedGenerationSchema = Type.Integer({
  description: 'observedGeneration is the metadata.generation the operator last reconciled.',
  format: 'int64',
  minimum: 0,
});

/** The CEL message used by both model kinds for the access rule. */
const ACCESS_RULE: CelRule = {
  rule: "(has(self.public) && self.public) || (has(self.groups) && size(self.groups) > 0)",
  message: 'spec.access: nobody could call this model; set spec.access.public: true or list at least one group in spec.access.groups',
};

/** `spec.access` of LLMModel and PassthroughModel: who may call the model. */
export const AccessSchema = Type.Object(
  {
    public: Type.Optional(
      Type.Boolean({ description: 'public makes the model usable by every authenticated user, whatever their groups.' }),
    ),
    groups: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 256, ...cel(...groupNameRules('spec.access.groups')) }), {
        description: 'groups lists the OIDC groups whose members may call the model (ignored when public is true).',
        maxItems: 64,
      }),
    ),
  },
  { description: 'access decides who may call the model: everyone authenticated (public) or members of the listed groups.', ...cel(ACCESS_RULE) },
);
export type Access = typeof AccessSchema.static;

/** An on/off switch for one of the two shared endpoints. */
export function EndpointToggleSchema<E extends TProperties>(which: 'external' | 'internal', withDefault: boolean, extra: E = {} as E) {
  const what = which === 'external' ? 'external endpoint (API keys)' : 'internal endpoint (OIDC JWT with groups)';
  return Type.Object(
    {
      enabled: Type.Optional(
        Type.Boolean({
          description: `enabled publishes the model on the ${what}; omitted means enabled.`,
          ...(withDefault ? { default: true } : {}),
        }),
      ),
      ...extra,
    },
    { description: `${which} configures the ${what}.` },
  );
}

/** `status.endpoints` of both model kinds: the URLs the model is reachable at. */
export const EndpointStatusSchema = Type.Object(
  {
    external: Type.Optional(Type.String({ description: 'external is the base URL of the external (API key) endpoint.' })),
    internal: Type.Optional(Type.String({ description: 'internal is the base URL of the internal (JWT) endpoint.' })),
  },
  { description: 'endpoints are the URLs at which the model is served.' },
);

/** Regular expression of an RFC 1123 DNS label (lower case), for names reused as Service names. */
export const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** Regular expression of an RFC 1123 DNS subdomain (lower case), the shape of most object names. */
export const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/** A reference to an object name in the same namespace, validated as a DNS subdomain. */
export function ObjectNameSchema(description: string) {
  return Type.String({ description, minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN_PATTERN });
}

/** One environment variable, as in a Pod container spec (valueFrom kept verbatim). */
export const EnvVarSchema = Type.Object(
  {
    name: Type.String({ description: 'name of the environment variable.', minLength: 1, maxLength: 256 }),
    value: Type.Optional(Type.String({ description: 'value of the variable (mutually exclusive with valueFrom).' })),
    valueFrom: Type.Optional(
      FreeFormObject({ description: 'valueFrom reads the value from a Secret, ConfigMap or field, as core/v1 EnvVarSource.' }),
    ),
  },
  { description: 'An environment variable (core/v1 EnvVar).' },
);
export type EnvVar = typeof EnvVarSchema.static;
