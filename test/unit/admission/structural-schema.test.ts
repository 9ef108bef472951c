// Schema defaulting, pruning and the OpenAPI checks, with the API server's field paths.
import { formatPath, leadingField, parseRelativeFieldPath } from '../../../src/admission/field-path';
import { blocksCelRules, defaultAndPrune, schemaProblems } from '../../../src/admission/structural-schema';

const schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['count'],
      properties: {
        count: { type: 'integer', minimum: 1, maximum: 4 },
        mode: { type: 'string', enum: ['a', 'b'], default: 'a' },
        nested: { type: 'object', properties: { on: { type: 'boolean', default: true } } },
        labels: { type: 'object', maxProperties: 2, additionalProperties: { type: 'string', pattern: '^[a-z]+$' } },
        ids: { type: 'array', maxItems: 2, items: { type: 'string', minLength: 1 } },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
};

describe('defaultAndPrune', () => {
  test('fills defaults of present objects only, drops nulls and undeclared fields (reporting them)', () => {
    const object = { metadata: { name: 'x', extra: 1 }, spec: { count: 1, nested: {}, unknown: 1, mode: null, free: { anything: { deep: 1 } } } };
    const pruned = defaultAndPrune(schema, object);
    expect(object.spec).toEqual({ count: 1, mode: 'a', nested: { on: true }, free: { anything: { deep: 1 } } });
    expect(object.metadata).toEqual({ name: 'x', extra: 1 });
    expect(pruned).toEqual(['spec.unknown']);
  });

  test('does not create a missing parent to hold a default', () => {
    const object = { spec: { count: 1 } };
    defaultAndPrune(schema, object);
    expect(object.spec).toEqual({ count: 1, mode: 'a' });
  });
});

describe('schemaProblems', () => {
  const problems = (spec: unknown) => schemaProblems(schema, { spec } as never).map((p) => `${p.field}: ${p.message}`);

  test('names each field as the API server does, map entries as properties', () => {
    expect(problems({})).toEqual(['spec.count: Required value']);
    expect(problems({ count: 5 })).toEqual(['spec.count: Invalid value: 5: spec.count in body should be less than or equal to 4']);
    expect(problems({ count: 'two' })).toEqual(['spec.count: Invalid value: "string": spec.count in body must be of type integer: "string"']);
    expect(problems({ count: 1, mode: 'c' })).toEqual(['spec.mode: Unsupported value: "c": supported values: "a", "b"']);
    expect(problems({ count: 1, labels: { a: 'B' } })).toEqual(['spec.labels.a: Invalid value: "B": spec.labels.a in body should match \'^[a-z]+$\'']);
    expect(problems({ count: 1, ids: ['', 'x', 'y'] })).toEqual([
      'spec.ids: Too many: 3: must have at most 2 items',
      'spec.ids[0]: Invalid value: "": spec.ids[0] in body should be at least 1 chars long',
    ]);
  });

  test('type, required, enum, too long and too many errors keep the CEL rules from running', () => {
    expect(blocksCelRules(schemaProblems(schema, { spec: {} } as never))).toBe(true);
    expect(blocksCelRules(schemaProblems(schema, { spec: { count: 9 } } as never))).toBe(false);
  });
});

describe('field paths', () => {
  test('formatPath writes properties with dots, indexes and map keys in brackets', () => {
    expect(formatPath([{ property: 'spec' }, { property: 'requests' }, { key: 'cpu' }])).toBe('spec.requests[cpu]');
    expect(formatPath([{ property: 'spec' }, { property: 'ids' }, { index: 2 }])).toBe('spec.ids[2]');
    expect(formatPath([])).toBe('');
  });

  test('parseRelativeFieldPath reads a rule fieldPath', () => {
    expect(parseRelativeFieldPath('.provider.name')).toEqual([{ property: 'provider' }, { property: 'name' }]);
    expect(parseRelativeFieldPath(".labels['a.b'][0]")).toEqual([{ property: 'labels' }, { property: 'a.b' }, { index: 0 }]);
    expect(parseRelativeFieldPath('provider')).toBeUndefined();
  });

  test('leadingField finds the field a webhook message starts with', () => {
    expect(leadingField('spec.models.declared[1]: "a" is already listed')).toBe('spec.models.declared[1]');
    expect(leadingField('metadata.namespace: "x" is not the operator namespace')).toBe('metadata.namespace');
    expect(leadingField('could not check whether ...')).toBeUndefined();
  });
});
