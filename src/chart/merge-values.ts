// Helm's values merge: maps merge key by key, everything else (lists included) is replaced.
import { plainCopy } from '../../constructs/render-context';
export function mergeValues<T>(base: T, override: unknown): T {
  if (!isMap(base) || !isMap(override)) return plainCopy((override === undefined ? base : override) as T);
  const out: Record<string, unknown> = plainCopy(base as Record<string, unknown>);
  for (const [k, v] of Object.entries(override)) out[k] = k in out ? mergeValues(out[k], v) : plainCopy(v);
  return out as T;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
