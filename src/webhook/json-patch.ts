// RFC 6902 JSON Patch between the object the API server sent and the object after defaulting.
// Mutating webhooks must answer with a patch, not the new object, so defaulting functions work on
// a copy and this module turns the difference into add/replace/remove operations.

export type JsonPatchOperation =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Escapes one reference token of a JSON Pointer (RFC 6901: `~` -> `~0`, `/` -> `~1`). */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Structural equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keysA = Object.keys(a).filter((k) => a[k] !== undefined);
    const keysB = Object.keys(b).filter((k) => b[k] !== undefined);
    return keysA.length === keysB.length && keysA.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The operations that turn `before` into `after`. Objects are compared key by key; arrays and
 * scalars are replaced whole (defaults never reorder list items, so element diffs buy nothing).
 */
export function jsonPatch(before: unknown, after: unknown, path = ''): JsonPatchOperation[] {
  if (jsonEqual(before, after)) return [];
  if (!isPlainObject(before) || !isPlainObject(after)) {
    return after === undefined ? [{ op: 'remove', path }] : [{ op: 'replace', path, value: after }];
  }
  const operations: JsonPatchOperation[] = [];
  for (const key of Object.keys(before)) {
    if (before[key] !== undefined && after[key] === undefined) {
      operations.push({ op: 'remove', path: `${path}/${escapePointerToken(key)}` });
    }
  }
  for (const key of Object.keys(after)) {
    if (after[key] === undefined) continue;
    const childPath = `${path}/${escapePointerToken(key)}`;
    if (before[key] === undefined) operations.push({ op: 'add', path: childPath, value: after[key] });
    else operations.push(...jsonPatch(before[key], after[key], childPath));
  }
  return operations;
}

/** Applies a patch produced by `jsonPatch` (used by tests and by the server's self-check). */
export function applyJsonPatch<T>(document: T, operations: readonly JsonPatchOperation[]): T {
  let root: unknown = structuredClone(document);
  for (const operation of operations) {
    if (operation.path === '') {
      root = operation.op === 'remove' ? undefined : structuredClone(operation.value);
      continue;
    }
    const tokens = operation.path
      .slice(1)
      .split('/')
      .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = tokens.pop() as string;
    let parent = root as Record<string, unknown>;
    for (const token of tokens) {
      const next = parent[token];
      if (typeof next !== 'object' || next === null) throw new Error(`JSON Patch path ${operation.path} does not exist`);
      parent = next as Record<string, unknown>;
    }
    if (operation.op === 'remove') {
      if (!(last in parent)) throw new Error(`JSON Patch remove of missing ${operation.path}`);
      delete parent[last];
    } else {
      if (operation.op === 'replace' && !(last in parent)) throw new Error(`JSON Patch replace of missing ${operation.path}`);
      parent[last] = structuredClone(operation.value);
    }
  }
  return root as T;
}
