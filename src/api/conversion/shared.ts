// The machinery every kind's conversion shares: plain-JSON helpers that never throw on odd input,
// and the restore record that makes conversion lossless (docs/api-versions.md, "Conversion contract").
//
// A kind supplies two plain field mappings, up (v1alpha1 -> v1beta1) and down. `convertObject`
// maps the object, maps the result back, and records in one annotation every path where that
// differs from the original: the original value and the value the mapping produced. Converting
// back restores those paths only while every one still holds the produced value, so a client that
// changed one of them in the other version wins over the record.
import { API_GROUP, API_VERSION, API_VERSION_V1BETA1, type ApiVersionName } from '../common';

export type Json = null | boolean | number | string | Json[] | JsonObject;
export type JsonObject = { [key: string]: Json };

/** One kind's field mappings; both take and return whole objects and must not throw. */
export interface KindMapping {
  readonly kind: string;
  /** v1alpha1 -> v1beta1. */
  up(object: JsonObject): JsonObject;
  /** v1beta1 -> v1alpha1. */
  down(object: JsonObject): JsonObject;
}

/** The annotation on an object of version `v` that holds what its form in the *other* version needs back. */
export function restoreAnnotation(forVersion: ApiVersionName): string {
  return `conversion.${API_GROUP}/${forVersion}`;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object at `key` of `parent`, or undefined when it is absent or not an object. */
export function objectAt(parent: JsonObject | undefined, key: string): JsonObject | undefined {
  const value = parent?.[key];
  return isObject(value) ? value : undefined;
}

/** Moves `from[key]` to `to[toKey]` when present (the caller has copied `from`). */
export function move(from: JsonObject, key: string, to: JsonObject, toKey = key): void {
  if (key in from) {
    to[toKey] = from[key];
    delete from[key];
  }
}

/** `value` with no key, or undefined when it has none (so empty groups are not created). */
export function nonEmpty(value: JsonObject): JsonObject | undefined {
  return Object.keys(value).length > 0 ? value : undefined;
}

/**
 * `object` without the spec fields only v1beta1 has (`routing` on both model kinds, docs/design/routing.md;
 * `observability` on LLMModel). Dropping them in the v1alpha1 form makes the round trip differ
 * there, so the restore record keeps them and a v1beta1 read of an object written or stored as
 * v1alpha1 gets them back.
 */
export function withoutV1beta1Fields(object: JsonObject, fields: readonly string[]): JsonObject {
  const spec = objectAt(object, 'spec');
  if (!spec || !fields.some((f) => f in spec)) return object;
  const rest = { ...spec };
  for (const f of fields) delete rest[f];
  return { ...object, spec: rest };
}

/** A deep copy of JSON (plain objects in this realm, unlike structuredClone under some test runners). */
export function clone<T extends Json | undefined>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => clone(v)) as T;
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) out[k] = clone(v);
    return out as T;
  }
  return value;
}

export function deepEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

/** One path the mapping does not carry: `value` is the original (absent: the path was absent), `mapped` what the mapping produced. */
export interface RestoreEntry {
  readonly path: readonly string[];
  readonly value?: Json;
  readonly mapped?: Json;
}

/**
 * Paths where `original` and `mapped` differ; apiVersion and metadata are left out. It descends
 * where both hold an object, and where only the original holds a non-empty one, so that each
 * entry covers one leaf: a client adding a sibling in the other version (a nodeSelector beside the
 * recorded extraArgs) then leaves the record current.
 */
export function differences(original: JsonObject, mapped: JsonObject, path: string[] = []): RestoreEntry[] {
  const entries: RestoreEntry[] = [];
  const keys = [...new Set([...Object.keys(original), ...Object.keys(mapped)])].sort();
  for (const key of keys) {
    if (path.length === 0 && (key === 'apiVersion' || key === 'metadata')) continue;
    const a = original[key];
    const b = mapped[key];
    const at = [...path, key];
    if (isObject(a) && isObject(b)) entries.push(...differences(a, b, at));
    else if (isObject(a) && !(key in mapped) && Object.keys(a).length > 0) entries.push(...differences(a, {}, at));
    else if (!(key in original) || !(key in mapped) || !deepEqual(a, b)) {
      entries.push({ path: at, ...(key in original ? { value: a } : {}), ...(key in mapped ? { mapped: b } : {}) });
    }
  }
  return entries;
}

function get(object: JsonObject, path: readonly string[]): Json | undefined {
  let node: Json | undefined = object;
  for (const key of path) {
    if (!isObject(node) || !(key in node)) return undefined;
    node = node[key];
  }
  return node;
}

function has(object: JsonObject, path: readonly string[]): boolean {
  const parent = get(object, path.slice(0, -1));
  return isObject(parent) && path[path.length - 1] in parent;
}

function set(object: JsonObject, path: readonly string[], entry: RestoreEntry): void {
  let node = object;
  for (const key of path.slice(0, -1)) {
    if (!isObject(node[key])) node[key] = {};
    node = node[key] as JsonObject;
  }
  const last = path[path.length - 1];
  if ('value' in entry) node[last] = clone(entry.value as Json);
  else delete node[last];
}

/** A record: the paths to restore, and the annotation it displaced on the converted object, if any. */
export interface RestoreRecord {
  readonly restore: readonly RestoreEntry[];
  /** The value the source object had under the record's own annotation key (it is put back). */
  readonly previous?: string;
}

/** The record in `raw`, or undefined when `raw` is not one (it is then an ordinary annotation). */
export function parseRestore(raw: string | undefined): RestoreRecord | undefined {
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!isObject(parsed) || !Array.isArray(parsed.restore)) return undefined;
  if ('previous' in parsed && typeof parsed.previous !== 'string') return undefined;
  const entries = parsed.restore;
  const valid = entries.every(
    (e) => isObject(e) && Array.isArray(e.path) && e.path.length > 0 && e.path.every((k) => typeof k === 'string') && !['apiVersion', 'metadata'].includes(e.path[0] as string),
  );
  return valid ? (parsed as unknown as RestoreRecord) : undefined;
}

/** Applies `entries` to `object` when every path still holds what the mapping produced; reports whether it did. */
export function applyRestore(object: JsonObject, entries: readonly RestoreEntry[]): boolean {
  const current = entries.every((e) => ('mapped' in e ? has(object, e.path) && deepEqual(get(object, e.path), e.mapped) : !has(object, e.path)));
  if (!current) return false;
  for (const entry of entries) set(object, entry.path, entry);
  return true;
}

/** The annotation value of a record: deterministic (sorted paths, keys in a fixed order). */
export function formatRestore(record: RestoreRecord): string {
  return JSON.stringify({
    restore: record.restore.map((e) => ({ path: e.path, ...('value' in e ? { value: e.value } : {}), ...('mapped' in e ? { mapped: e.mapped } : {}) })),
    ...(record.previous !== undefined ? { previous: record.previous } : {}),
  });
}

function annotations(object: JsonObject): JsonObject | undefined {
  return objectAt(objectAt(object, 'metadata'), 'annotations');
}

/** Removes annotation `key` (and an annotations map it leaves empty) from a copy's metadata; returns its value. */
function takeAnnotation(object: JsonObject, key: string): string | undefined {
  const map = annotations(object);
  const value = map?.[key];
  if (!map || typeof value !== 'string' || parseRestore(value) === undefined) return undefined;
  const metadata = object.metadata as JsonObject;
  const rest = { ...map };
  delete rest[key];
  if (Object.keys(rest).length > 0) metadata.annotations = rest;
  else delete metadata.annotations;
  return value;
}

/** The string annotation `key` of `object`, if any. */
function annotation(object: JsonObject, key: string): string | undefined {
  const value = annotations(object)?.[key];
  return typeof value === 'string' ? value : undefined;
}

function putAnnotation(object: JsonObject, key: string, value: string): void {
  const metadata = isObject(object.metadata) ? object.metadata : (object.metadata = {});
  metadata.annotations = { ...(isObject(metadata.annotations) ? metadata.annotations : {}), [key]: value };
}

/** `apiVersion` of `version`. */
export function groupVersion(version: ApiVersionName): string {
  return `${API_GROUP}/${version}`;
}

/**
 * `object` converted to `to`: mapped, restored from its record when current, and carrying a new
 * record of what its form in the other version needs back. An object already in `to` is returned
 * unchanged. Never throws on an object that is JSON.
 */
export function convertObject(mapping: KindMapping, object: JsonObject, to: ApiVersionName): JsonObject {
  const from: ApiVersionName = to === API_VERSION_V1BETA1 ? API_VERSION : API_VERSION_V1BETA1;
  if (object.apiVersion === groupVersion(to)) return clone(object);
  const forward = to === API_VERSION_V1BETA1 ? mapping.up : mapping.down;
  const backward = to === API_VERSION_V1BETA1 ? mapping.down : mapping.up;

  const source = clone(object);
  // A record on the source is what `to` needs back; the source's own form does not keep it.
  const record = parseRestore(takeAnnotation(source, restoreAnnotation(to)));
  const converted = forward(clone(source));
  converted.apiVersion = groupVersion(to);
  if (record) applyRestore(converted, record.restore);
  if (record?.previous !== undefined) putAnnotation(converted, restoreAnnotation(to), record.previous);

  const roundTrip = backward(clone(converted));
  const lost = differences(source, roundTrip);
  // An annotation already under the new record's key (copied from an object of the other version,
  // or anything else) goes inside the record when one is written or when it would itself be
  // read as a record; otherwise it stays as it is, an ordinary annotation.
  const previous = annotation(source, restoreAnnotation(from));
  if (lost.length > 0 || (previous !== undefined && parseRestore(previous) !== undefined)) {
    putAnnotation(converted, restoreAnnotation(from), formatRestore({ restore: lost, ...(previous !== undefined ? { previous } : {}) }));
  }
  return converted;
}
