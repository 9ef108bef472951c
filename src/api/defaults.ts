// Schema defaulting as the API server does it: a property with a `default` that is absent from an
// object that is present gets the default; defaults never create a missing parent object.
// The mutating webhook and the tests use it, so both agree with what the API server stores.
import type { TSchema } from '@sinclair/typebox';
import type { JsonSchema } from './crd';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A copy of `value` with the defaults of `schema` filled in (the input is not changed). */
export function applyDefaults<T>(schema: TSchema | JsonSchema, value: T): T {
  return fill(schema as JsonSchema, structuredClone(value) as Json) as T;
}

function fill(schema: JsonSchema, value: Json): Json {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = schema.items as JsonSchema | undefined;
    return items ? value.map((v) => fill(items, v)) : value;
  }
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (properties) {
    for (const [name, child] of Object.entries(properties)) {
      if (!(name in value) && child.default !== undefined) value[name] = structuredClone(child.default) as Json;
      if (name in value) value[name] = fill(child, value[name]);
    }
  } else if (typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null) {
    for (const key of Object.keys(value)) value[key] = fill(schema.additionalProperties as JsonSchema, value[key]);
  }
  return value;
}
