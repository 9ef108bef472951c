// Turns a kind's TypeBox schema into a CustomResourceDefinition: a structural-schema sanitiser
// (the API server rejects $ref, const, untyped anyOf, ...), the CRD object itself and its YAML.
import type { TSchema } from '@sinclair/typebox';
import { API_CATEGORY, API_GROUP, API_VERSION, API_VERSION_V1BETA1 } from './common';
import { version } from '../version';

/** A column of `kubectl get`. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description: string;
  readonly priority?: number;
}

/** Everything needed to build one kind's CRD; each kind file exports one. */
export interface KindDefinition {
  readonly kind: string;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  /** The whole v1alpha1 object (apiVersion, kind, metadata, spec, status). */
  readonly schema: TSchema;
  /**
   * The whole v1beta1 object; objects convert between the versions through the conversion webhook.
   * Set by the registry in kinds.ts (the v1beta1 files build on the v1alpha1 ones, not the reverse).
   */
  readonly v1beta1Schema?: TSchema;
  readonly printerColumns: readonly PrinterColumn[];
}

/** A JSON schema node as it appears in a CRD. */
export type JsonSchema = { [key: string]: unknown };

/** The columns every kind shows: the aggregate Ready condition and the age. */
export const READY_COLUMN: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
  description: 'Status of the Ready condition.',
};
/** Models: whether a request would reach the model now (its routes accepted, the gateway's proxies rolled out). */
export const PROGRAMMED_COLUMN: PrinterColumn = {
  name: 'Programmed',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Programmed")].status',
  description: 'Status of the Programmed condition: the gateway serves the model.',
};
export const AGE_COLUMN: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'Time since the object was created.',
};
export const PHASE_COLUMN: PrinterColumn = {
  name: 'Phase',
  type: 'string',
  jsonPath: '.status.phase',
  description: 'Lifecycle phase.',
};

const DROPPED_KEYS = new Set(['$id', '$schema']);

/**
 * A plain-JSON copy of `schema` that the API server accepts as a structural schema: TypeBox's
 * symbols and ids dropped, `const` as a one-value `enum`, and `additionalProperties: false`
 * removed (the API server prunes unknown fields anyway). Throws when a node cannot be made
 * structural, naming its path.
 */
export function toStructural(schema: TSchema): JsonSchema {
  const plain = JSON.parse(JSON.stringify(schema)) as JsonSchema;
  const result = sanitize(plain);
  const problems = structuralProblems(result);
  if (problems.length > 0) throw new Error(`schema is not structural:\n  ${problems.join('\n  ')}`);
  return result;
}

function sanitize(node: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED_KEYS.has(key)) continue;
    if (key === 'additionalProperties' && value === false) continue;
    if (key === 'const') {
      out.enum = [value];
      continue;
    }
    if (key === 'properties') {
      const props: JsonSchema = {};
      for (const [name, child] of Object.entries(value as JsonSchema)) props[name] = sanitize(child as JsonSchema);
      out.properties = props;
    } else if ((key === 'items' || key === 'additionalProperties') && typeof value === 'object' && value !== null) {
      out[key] = sanitize(value as JsonSchema);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** Reasons `schema` is not a structural schema with documented fields; empty when it is one. */
export function structuralProblems(schema: JsonSchema, path = ''): string[] {
  const problems: string[] = [];
  const at = path || '<root>';
  for (const bad of ['$ref', 'const', 'oneOf', 'allOf', 'not', 'patternProperties', 'nullable', 'definitions', '$defs']) {
    if (bad in schema) problems.push(`${at}: "${bad}" is not allowed in a structural schema`);
  }
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  if ('anyOf' in schema && !intOrString) problems.push(`${at}: anyOf is allowed only with x-kubernetes-int-or-string`);
  if (Array.isArray(schema.type)) problems.push(`${at}: type must be a single string, not a list`);
  if (schema.type === undefined && !intOrString && !preserve) problems.push(`${at}: type is missing`);
  if (schema.type === 'object' && 'properties' in schema && 'additionalProperties' in schema) {
    problems.push(`${at}: properties and additionalProperties are mutually exclusive`);
  }
  if (schema.type === 'array' && schema.items === undefined) problems.push(`${at}: an array needs items`);
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  for (const [name, child] of Object.entries(properties ?? {})) {
    const childPath = `${path}.${name}`;
    const serverOwned = childPath === '.metadata';
    if (!serverOwned && (typeof child.description !== 'string' || child.description.trim() === '')) problems.push(`${childPath}: description is missing`);
    problems.push(...structuralProblems(child, childPath));
  }
  if (typeof schema.items === 'object' && schema.items !== null) problems.push(...structuralProblems(schema.items as JsonSchema, `${path}[]`));
  if (typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null) {
    problems.push(...structuralProblems(schema.additionalProperties as JsonSchema, `${path}{}`));
  }
  return problems;
}

/** A CustomResourceDefinition as a plain JSON object, typed down to the schema (which stays JSON). */
export type CrdJson = ReturnType<typeof crdObject>;

/** The webhook Service the API server sends ConversionReviews to. */
export interface ConversionService {
  readonly name: string;
  readonly namespace: string;
}

/** Where the API server sends ConversionReviews: a release's Service, or a URL (tests on 127.0.0.1). */
export type ConversionTarget = ConversionService | { readonly url: string };

/** URL path of the conversion webhook on the operator's webhook server. */
export const CONVERSION_WEBHOOK_PATH = '/convert';

/**
 * `spec.conversion` pointing at one release's webhook Service. The generated CRDs do not carry it:
 * Helm cannot template crds/, so only the running operator (and `nls upgrade`, before the CRDs
 * change) knows its own Service and CA; they write this block, and no apply of the files (`nls crds
 * apply`, a GitOps sync) owns or resets a field the files never set.
 */
export function conversionSpec(target: ConversionTarget, caBundle?: string) {
  return {
    strategy: 'Webhook' as const,
    webhook: {
      conversionReviewVersions: ['v1'],
      clientConfig: {
        ...('url' in target ? { url: target.url } : { service: { name: target.name, namespace: target.namespace, path: CONVERSION_WEBHOOK_PATH, port: 443 } }),
        ...(caBundle ? { caBundle } : {}),
      },
    },
  };
}

/** What the API server says to a client still using v1alpha1 (kubectl prints it as a warning). */
export function deprecationWarning(kind: string): string {
  return `${API_GROUP}/${API_VERSION} ${kind} is deprecated; use ${API_GROUP}/${API_VERSION_V1BETA1} (docs/api-versions.md), and run \`nls storage migrate\` before a release stops serving ${API_VERSION}`;
}

/** The CustomResourceDefinition of one kind, as a plain JSON object. */
export function crdObject(def: KindDefinition) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${def.plural}.${API_GROUP}`,
      labels: {
        'app.kubernetes.io/name': 'nebari-llm-serving',
        'app.kubernetes.io/part-of': 'nebari-llm-serving',
        'app.kubernetes.io/version': version,
      },
    },
    spec: {
      group: API_GROUP,
      names: {
        kind: def.kind,
        listKind: def.listKind,
        plural: def.plural,
        singular: def.singular,
        shortNames: [...def.shortNames],
        categories: [API_CATEGORY],
      },
      scope: 'Namespaced',
      // v1beta1 is stored; v1alpha1 stays served (deprecated) and converts through the webhook.
      versions: [
        ...(def.v1beta1Schema
          ? [
              {
                name: API_VERSION_V1BETA1,
                served: true,
                storage: true,
                schema: { openAPIV3Schema: rootSchema(def.v1beta1Schema) },
                subresources: { status: {} },
                additionalPrinterColumns: def.printerColumns.map((c) => ({ ...c })),
              },
            ]
          : []),
        {
          name: API_VERSION,
          served: true,
          storage: !def.v1beta1Schema,
          ...(def.v1beta1Schema ? { deprecated: true, deprecationWarning: deprecationWarning(def.kind) } : {}),
          schema: { openAPIV3Schema: rootSchema(def.schema) },
          subresources: { status: {} },
          additionalPrinterColumns: def.printerColumns.map((c) => ({ ...c })),
        },
      ],
    },
  };
}

/** The API server owns metadata (only `type` may be given) and always sets apiVersion and kind. */
const SERVER_OWNED = new Set(['apiVersion', 'kind', 'metadata']);

/** The `openAPIV3Schema` of a kind: structural, with the server-owned top-level fields relaxed. */
export function rootSchema(schema: TSchema): JsonSchema {
  const root = toStructural(schema);
  const properties = root.properties as Record<string, JsonSchema>;
  properties.metadata = { type: 'object' };
  root.required = (root.required as string[]).filter((name) => !SERVER_OWNED.has(name));
  return root;
}

/** Repository path of a kind's CRD file (also its name inside the chart's crds/). */
export function crdFileName(def: Pick<KindDefinition, 'plural'>): string {
  return `${API_GROUP}_${def.plural}.yaml`;
}
