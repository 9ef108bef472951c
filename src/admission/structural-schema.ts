// The CRD's structural schema applied offline the way the API server applies it to a custom
// resource: null fields dropped, `default:` values filled in, fields the schema does not declare
// pruned (and reported), then the OpenAPI checks (type, enum, pattern, lengths, bounds, required)
// with the API server's field paths and wording.
import type { JsonSchema } from '../api/crd';
import { type PathStep, formatPath } from './field-path';
import { jsonEqual } from '../webhook/json-patch';
import { re2 } from './regex';
import type { Problem } from './result';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The API server's error types that stop the CEL rules from running (its `hasBlockingErr`). */
export type SchemaErrorType = 'Required' | 'NotSupported' | 'TypeInvalid' | 'TooLong' | 'TooMany' | 'Invalid';

export interface SchemaProblem extends Problem {
  readonly type: SchemaErrorType;
}

const blockingTypes: ReadonlySet<SchemaErrorType> = new Set(['Required', 'NotSupported', 'TypeInvalid', 'TooLong', 'TooMany']);

/** True when the schema problems keep the API server from evaluating the CEL rules. */
export function blocksCelRules(problems: readonly SchemaProblem[]): boolean {
  return problems.some((p) => blockingTypes.has(p.type));
}

const isObject = (value: unknown): value is { [key: string]: Json } => typeof value === 'object' && value !== null && !Array.isArray(value);
const properties = (schema: JsonSchema) => schema.properties as Record<string, JsonSchema> | undefined;
const mapValues = (schema: JsonSchema) =>
  typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null ? (schema.additionalProperties as JsonSchema) : undefined;
const preservesUnknown = (schema: JsonSchema) => schema['x-kubernetes-preserve-unknown-fields'] === true;

/**
 * Drops null properties (non-nullable schemas), fills defaults and prunes undeclared fields, in
 * place. Returns the paths of the pruned fields. `metadata` at the root is the API server's own.
 */
export function defaultAndPrune(schema: JsonSchema, value: Json, at: PathStep[] = []): string[] {
  const pruned: string[] = [];
  if (Array.isArray(value)) {
    const items = schema.items as JsonSchema | undefined;
    if (items) value.forEach((item, index) => pruned.push(...defaultAndPrune(items, item, [...at, { index }])));
    return pruned;
  }
  if (!isObject(value)) return pruned;
  const props = properties(schema);
  const values = mapValues(schema);
  for (const key of Object.keys(value)) if (value[key] === null && (props || values)) delete value[key];
  if (props) {
    for (const [name, child] of Object.entries(props)) {
      if (!(name in value) && child.default !== undefined) value[name] = structuredClone(child.default) as Json;
    }
    for (const key of Object.keys(value)) {
      const child = props[key];
      if (at.length === 0 && key === 'metadata') continue;
      if (child) pruned.push(...defaultAndPrune(child, value[key], [...at, { property: key }]));
      else if (!preservesUnknown(schema)) {
        pruned.push(formatPath([...at, { property: key }]));
        delete value[key];
      }
    }
  } else if (values) {
    for (const key of Object.keys(value)) pruned.push(...defaultAndPrune(values, value[key], [...at, { key }]));
  }
  return pruned;
}

function typeName(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function fitsType(type: unknown, value: Json): boolean {
  switch (type) {
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    default:
      return true;
  }
}

/** Go's %v-like rendering of a value in an `Invalid value:` cause. */
export function shownValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return '"array"';
  if (value === null) return 'null';
  return '"object"';
}

/**
 * The OpenAPI checks of `schema` on `value`; every problem names its field. `old` is the old
 * object's value at the same path on UPDATE: an unchanged value is not checked again (the API
 * server's validation ratcheting), so objects stored before a stricter schema can still be updated.
 */
export function schemaProblems(schema: JsonSchema, value: Json, at: PathStep[] = [], old?: Json): SchemaProblem[] {
  if (old !== undefined && jsonEqual(value, old)) return [];
  const field = formatPath(at);
  const problems: SchemaProblem[] = [];
  const add = (type: SchemaErrorType, message: string) => problems.push({ field, message, source: 'schema', type });
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  if (intOrString) {
    if (!(typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value)))) {
      add('TypeInvalid', `Invalid value: ${shownValue(value)}: ${field} in body must be of type integer-or-string: "${typeName(value)}"`);
      return problems;
    }
  } else if (schema.type !== undefined && !fitsType(schema.type, value)) {
    add('TypeInvalid', `Invalid value: "${typeName(value)}": ${field} in body must be of type ${String(schema.type)}: "${typeName(value)}"`);
    return problems;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => JSON.stringify(allowed) === JSON.stringify(value))) {
    add('NotSupported', `Unsupported value: ${shownValue(value)}: supported values: ${schema.enum.map((v) => JSON.stringify(v)).join(', ')}`);
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) add('TooLong', `Too long: may not be more than ${schema.maxLength} bytes`);
    if (typeof schema.minLength === 'number' && length < schema.minLength) {
      add('Invalid', `Invalid value: ${shownValue(value)}: ${field} in body should be at least ${schema.minLength} chars long`);
    }
    if (typeof schema.pattern === 'string' && !re2(schema.pattern).test(value)) {
      add('Invalid', `Invalid value: ${shownValue(value)}: ${field} in body should match '${schema.pattern}'`);
    }
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) {
      add('Invalid', `Invalid value: ${value}: ${field} in body should be greater than or equal to ${schema.minimum}`);
    }
    if (typeof schema.maximum === 'number' && value > schema.maximum) {
      add('Invalid', `Invalid value: ${value}: ${field} in body should be less than or equal to ${schema.maximum}`);
    }
  }
  if (Array.isArray(value)) {
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) add('TooMany', `Too many: ${value.length}: must have at most ${schema.maxItems} items`);
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) {
      add('Invalid', `Invalid value: ${value.length}: ${field} in body should have at least ${schema.minItems} items`);
    }
    const items = schema.items as JsonSchema | undefined;
    if (items) value.forEach((item, index) => problems.push(...schemaProblems(items, item, [...at, { index }])));
  }
  if (isObject(value)) {
    const count = Object.keys(value).length;
    if (typeof schema.maxProperties === 'number' && count > schema.maxProperties) add('TooMany', `Too many: ${count}: must have at most ${schema.maxProperties} items`);
    if (typeof schema.minProperties === 'number' && count < schema.minProperties) {
      add('Invalid', `Invalid value: ${count}: ${field} in body should have at least ${schema.minProperties} properties`);
    }
    for (const name of (schema.required as string[] | undefined) ?? []) {
      if (!(name in value)) problems.push({ field: formatPath([...at, { property: name }]), message: 'Required value', source: 'schema', type: 'Required' });
    }
    const props = properties(schema);
    const values = mapValues(schema);
    for (const [key, child] of Object.entries(value)) {
      if (at.length === 0 && key === 'metadata') continue;
      const oldChild = isObject(old) ? old[key] : undefined;
      if (props?.[key]) problems.push(...schemaProblems(props[key], child, [...at, { property: key }], oldChild));
      // The OpenAPI validator names map entries like properties (`nodeSelector.a`); CEL uses `[a]`.
      else if (values) problems.push(...schemaProblems(values, child, [...at, { property: key }], oldChild));
    }
  }
  return problems;
}
