import type { TSchema } from '@sinclair/typebox';
import { CustomBuildSchema } from '../../../src/chart/custom-build';
import { closestKey, PATTERN_MEANINGS, schemaProblems } from '../../../src/chart/value-problems';
import { mergeValues } from '../../../src/chart/merge-values';
import { defaultValues, ValuesSchema } from '../../../src/chart/values-schema';

/** Every `pattern` in a schema, at any depth. */
function patterns(node: unknown): string[] {
  if (!node || typeof node !== 'object') return [];
  const own = typeof (node as TSchema).pattern === 'string' ? [(node as TSchema).pattern as string] : [];
  return [...own, ...Object.values(node).flatMap(patterns)];
}

test('every pattern of the values and build schemas has a meaning in words (issue 30, item 9)', () => {
  const missing = [...new Set([...patterns(ValuesSchema), ...patterns(CustomBuildSchema)])].filter((p) => !(p in PATTERN_MEANINGS));
  expect(missing).toEqual([]);
});

test('a misspelt key gets the nearest known key; an unrelated one only the list', () => {
  expect(closestKey('replica', ['image', 'replicas', 'logLevel'])).toBe('replicas');
  expect(closestKey('LogLevel', ['image', 'replicas', 'logLevel'])).toBe('logLevel');
  expect(closestKey('zzz', ['image', 'replicas', 'logLevel'])).toBeUndefined();
  expect(schemaProblems(ValuesSchema, mergeValues(defaultValues(), { operator: { zzz: 1 } }), 'values')).toEqual([expect.stringMatching(/^values\.operator\.zzz: unknown key \(known keys here: image, replicas, /)]);
});
