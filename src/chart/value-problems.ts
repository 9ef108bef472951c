// Problems of a custom build's config in words a person can act on: every problem at once, the
// config key first (`values.operator.replicas: …`), the allowed values of an enum, what a pattern
// means instead of the regular expression, and the nearest known key for a misspelt one.
import type { TSchema } from '@sinclair/typebox';
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';

/** Edits (insert, delete, replace) between two short strings. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}

/** The known key a misspelt one most likely means, or undefined when none is close. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const scored = known.map((k) => ({ k, d: k.toLowerCase() === key.toLowerCase() ? 0 : editDistance(key, k) })).sort((a, b) => a.d - b.d);
  const best = scored[0];
  return best && best.d <= Math.max(2, Math.floor(key.length / 3)) ? best.k : undefined;
}

/**
 * What each pattern of the values schema and the build schema means, as a reader would say it.
 * A test walks both schemas and fails on a pattern missing here.
 */
export const PATTERN_MEANINGS: Readonly<Record<string, string>> = {
  '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$': 'a DNS label: lower-case letters, digits and "-", starting and ending with a letter or digit',
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$': 'empty, or a DNS label: lower-case letters, digits and "-", starting and ending with a letter or digit',
  '^([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*\\.?)?$':
    'empty, or a DNS name such as llm.example.com: labels of letters, digits and "-" separated by dots; no scheme, port, path, "_" or spaces',
  '^(sha256:[a-f0-9]{64})?$': 'empty, or "sha256:" followed by 64 lower-case hex digits',
  '^\\S*$': 'an image reference without spaces',
  '^(https://\\S+)?$': 'empty, or an https:// URL without spaces',
  '^(https?://\\S+)?$': 'empty, or an http:// or https:// URL without spaces',
  '^([0-9]{1,5}(h|m|s|ms)){1,4}$': 'a duration such as 120s, 10m or 1h30m (units h, m, s, ms)',
  '^[a-z0-9-]+$': 'a header name of lower-case letters, digits and "-"',
  '^[^\\s,]+$': 'an image prefix or reference without spaces or commas',
  '^[0-9]+(h|m|s)$': 'a duration of one number and a unit h, m or s, such as 720h',
  '^[0-9]+(ms|s|m|h)$': 'a duration of one number and a unit ms, s, m or h, such as 30s',
  '^[0-9]+(ms|s|m|h|d)$': 'a Prometheus duration of one number and a unit ms, s, m, h or d, such as 5m',
  '^\\S+[^/]$': 'a URL without spaces and without a trailing "/"',
  '^[1-9][0-9]*(Ki|Mi|Gi)?$': 'a size such as 50Mi (a positive number, optionally Ki, Mi or Gi)',
  '^[A-Z]{3}$': 'a currency code of three capital letters, such as USD or EUR',
  '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$': 'a Kubernetes object name: lower-case letters, digits, "-" and ".", starting and ending with a letter or digit',
  '^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$': 'empty, or a Kubernetes object name: lower-case letters, digits, "-" and ".", starting and ending with a letter or digit',
};

/** `/a/0/b` → `prefix.a[0].b` (or `a[0].b` without a prefix). */
export function pointerToKey(prefix: string, pointer: string): string {
  const parts = pointer.split('/').filter(Boolean).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  return `${prefix}${parts.map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('')}`.replace(/^\./, '');
}

const got = (value: unknown) => (value === undefined ? 'nothing' : JSON.stringify(value));

/** One schema error in words; undefined for errors that only repeat another (a union's branches). */
function describe(e: ValueError): string {
  const schema = e.schema as Record<string, unknown>;
  switch (e.type) {
    case ValueErrorType.ObjectAdditionalProperties: {
      const key = e.path.split('/').pop() ?? '';
      const known = Object.keys((schema.properties ?? {}) as object);
      const near = closestKey(key, known);
      return `unknown key${near ? `; did you mean ${near}?` : ''} (known keys here: ${known.join(', ')})`;
    }
    case ValueErrorType.Union: {
      const literals = ((schema.anyOf ?? []) as Array<Record<string, unknown>>).map((s) => s.const);
      if (literals.length > 0 && literals.every((l) => l !== undefined)) return `${got(e.value)} is not allowed; use one of ${literals.join(', ')}`;
      return `${got(e.value)} is of the wrong type (${e.message})`;
    }
    case ValueErrorType.StringPattern: {
      const meaning = PATTERN_MEANINGS[String(schema.pattern)];
      return `${got(e.value)} is not valid: expected ${meaning ?? `a value in the form the chart's values.schema.json describes`}`;
    }
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return `${got(e.value)} is too large: at most ${String(schema.maximum)}`;
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return `${got(e.value)} is too small: at least ${String(schema.minimum)}`;
    case ValueErrorType.StringMinLength:
      return schema.minLength === 1 ? `${got(e.value)} is empty; set a value` : `${got(e.value)} is too short: at least ${String(schema.minLength)} characters`;
    case ValueErrorType.StringMaxLength:
      return `${got(e.value)} is too long: at most ${String(schema.maxLength)} characters`;
    case ValueErrorType.ObjectRequiredProperty:
      return 'required; it has no default';
    default:
      return `${got(e.value)}: ${e.message.charAt(0).toLowerCase()}${e.message.slice(1)}`;
  }
}

/** Every problem of `value` against `schema`, one line each, starting with its key under `prefix`. */
export function schemaProblems(schema: TSchema, value: unknown, prefix: string): string[] {
  const lines = [...Value.Errors(schema, value)].map((e) => `${pointerToKey(prefix, e.path) || '(the whole file)'}: ${describe(e)}`);
  return [...new Set(lines)];
}
